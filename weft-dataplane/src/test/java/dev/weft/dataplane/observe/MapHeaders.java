package dev.weft.dataplane.observe;

import java.util.LinkedHashMap;
import java.util.Map;

/** Request headers for unit tests: lower-case names, as the data plane's header views behave. */
final class MapHeaders implements HeaderAccess {
    final Map<String, String> map = new LinkedHashMap<>();

    MapHeaders with(String name, String value) {
        map.put(name.toLowerCase(), value);
        return this;
    }

    @Override
    public String get(String name) {
        return map.get(name.toLowerCase());
    }

    @Override
    public void set(String name, String value) {
        map.put(name.toLowerCase(), value);
    }
}
