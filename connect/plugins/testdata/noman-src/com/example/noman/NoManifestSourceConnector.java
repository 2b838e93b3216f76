package com.example.noman;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;

/** A source connector shipped without a ServiceLoader manifest (found by the reflective scan only). */
public class NoManifestSourceConnector extends BaseSource {
    @Override public void start(Map<String, String> props) { }
    @Override public Class<? extends Task> taskClass() { return null; }
    @Override public List<Map<String, String>> taskConfigs(int maxTasks) { return Collections.emptyList(); }
    @Override public void stop() { }
    @Override public ConfigDef config() { return new ConfigDef(); }
}
