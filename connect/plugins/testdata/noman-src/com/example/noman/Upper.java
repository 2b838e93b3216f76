package com.example.noman;

import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.components.Versioned;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.transforms.Transformation;

/** A transformation with nested Key/Value plugins, as Kafka's own SMTs are laid out. */
public abstract class Upper<R extends ConnectRecord<R>> implements Transformation<R>, Versioned {
    @Override public R apply(R record) { return record; }
    @Override public ConfigDef config() { return new ConfigDef(); }
    @Override public void close() { }
    @Override public void configure(Map<String, ?> configs) { }
    @Override public String version() { return "2.5.0"; }

    /** Upper-cases the key. */
    public static class Key<R extends ConnectRecord<R>> extends Upper<R> { }

    /** Upper-cases the value. */
    public static class Value<R extends ConnectRecord<R>> extends Upper<R> { }

    /** Not a plugin: package-private. */
    static class Hidden<R extends ConnectRecord<R>> extends Upper<R> { }
}
