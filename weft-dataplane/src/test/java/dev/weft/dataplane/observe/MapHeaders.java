package dev.weft.dataplane.observe;

import dev.weft.protocol.Traceparent;
import dev.weft.protocol.WmpHeaders;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Request headers for unit tests: lower-case names, as the data plane's header views behave. Either a map (only
 * {@code get} and {@code set} reach it) or, from {@link #fieldList}, a WMP header list that readers may walk
 * ({@link HeaderAccess#fields}), or, from {@link #heldContext}, such a list with a trace context held as numbers
 * beside it, as Weft's request head is.
 */
final class MapHeaders implements HeaderAccess {
    private final Map<String, String> map = new LinkedHashMap<>();
    private final WmpHeaders list;
    private final boolean holds;
    private Traceparent held;

    MapHeaders() {
        this(null, false);
    }

    private MapHeaders(WmpHeaders list, boolean holds) {
        this.list = list;
        this.holds = holds;
    }

    static MapHeaders fieldList() {
        return new MapHeaders(new WmpHeaders(), false);
    }

    static MapHeaders heldContext() {
        return new MapHeaders(new WmpHeaders(), true);
    }

    /** Adds a field (to a list, even when the name is there already; a map keeps the last). */
    MapHeaders with(String name, String value) {
        if (list != null) {
            list.add(name.toLowerCase(), value);
        } else {
            map.put(name.toLowerCase(), value);
        }
        return this;
    }

    /** Name to its first value. */
    Map<String, String> map() {
        if (list == null) {
            return map;
        }
        Map<String, String> first = new LinkedHashMap<>();
        if (held != null) {
            first.put(Traceparent.NAME, held.toString());
        }
        for (int i = 0; i < list.size(); i++) {
            first.putIfAbsent(list.name(i), list.value(i));
        }
        return first;
    }

    @Override
    public String get(String name) {
        if (held != null && name.equalsIgnoreCase(Traceparent.NAME)) {
            return held.toString();
        }
        return list != null ? list.get(name.toLowerCase()) : map.get(name.toLowerCase());
    }

    @Override
    public void set(String name, String value) {
        if (name.equalsIgnoreCase(Traceparent.NAME)) {
            held = null;
        }
        if (list != null) {
            list.set(name.toLowerCase(), value);
        } else {
            map.put(name.toLowerCase(), value);
        }
    }

    @Override
    public WmpHeaders fields() {
        return list;
    }

    @Override
    public Traceparent traceparent() {
        return held;
    }

    @Override
    public boolean traceparent(Traceparent t) {
        if (holds) {
            held = t;
        }
        return holds;
    }
}
