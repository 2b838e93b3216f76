package com.example.noman;

import org.apache.kafka.connect.source.SourceConnector;

/** An abstract base between the plugin and SourceConnector: the scan must follow it. */
public abstract class BaseSource extends SourceConnector {
    @Override
    public String version() {
        return "2.5.0";
    }
}
