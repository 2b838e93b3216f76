package com.example.noman;

/** Not a plugin: a plain helper class in the same jar. */
public final class Helper {
    private Helper() { }
    public static String name() { return "helper"; }
}
