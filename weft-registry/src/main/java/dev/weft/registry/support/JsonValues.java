package dev.weft.registry.support;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The sidecar's JSON: small, fixed documents (registry calls, watch lines, {@code /config}) read into plain maps,
 * lists and scalars, and written back from them, with Jackson's streaming {@code jackson-core} only. Jackson
 * databind maps to records by reflection at the cost of about 600 more classes in every sidecar, whose metadata stays
 * resident (docs/benchmarks.md, start-up and memory); for a dozen fields the mapping by hand below is shorter.
 *
 * <p>Reading is lenient the way the registry client needs it: unknown fields are kept and ignored by callers, a
 * missing number reads as 0 and a missing string as null. A field of the wrong type fails with an
 * {@link IOException} naming it.
 *
 * <p>Thread-safe: the factory is shared, parsers and generators are per call.
 */
public final class JsonValues {
    private static final JsonFactory FACTORY = new JsonFactory();

    private JsonValues() {
    }

    /** Parses one JSON value: objects become ordered {@code Map<String, Object>}, arrays {@code List<Object>}. */
    public static Object read(byte[] json) throws IOException {
        try (JsonParser p = FACTORY.createParser(json)) {
            return readDocument(p);
        }
    }

    public static Object read(String json) throws IOException {
        try (JsonParser p = FACTORY.createParser(json)) {
            return readDocument(p);
        }
    }

    /** Parses a document that must be a JSON object. */
    public static Map<String, Object> readObject(byte[] json) throws IOException {
        return object(read(json), "document");
    }

    public static Map<String, Object> readObject(String json) throws IOException {
        return object(read(json), "document");
    }

    private static Object readDocument(JsonParser p) throws IOException {
        if (p.nextToken() == null) {
            throw new IOException("empty JSON document");
        }
        Object value = readValue(p);
        if (p.nextToken() != null) {
            throw new IOException("trailing content after the JSON value at " + p.currentLocation());
        }
        return value;
    }

    private static Object readValue(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    p.nextToken();
                    m.put(name, readValue(p));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> list = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    list.add(readValue(p));
                }
                return list;
            }
            case VALUE_STRING -> {
                return p.getText();
            }
            case VALUE_NUMBER_INT -> {
                return p.getNumberValue();
            }
            case VALUE_NUMBER_FLOAT -> {
                return p.getDoubleValue();
            }
            case VALUE_TRUE -> {
                return Boolean.TRUE;
            }
            case VALUE_FALSE -> {
                return Boolean.FALSE;
            }
            case VALUE_NULL -> {
                return null;
            }
            default -> throw new IOException("unexpected JSON token " + t + " at " + p.currentLocation());
        }
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(Object value, String what) throws IOException {
        if (value instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw new IOException(what + ": expected a JSON object, got " + describe(value));
    }

    /** The field as a string; null when absent or null. */
    public static String string(Map<String, Object> m, String field) throws IOException {
        Object v = m.get(field);
        if (v == null || v instanceof String) {
            return (String) v;
        }
        throw new IOException("field '" + field + "': expected a string, got " + describe(v));
    }

    /** The field as a long; 0 when absent or null. */
    public static long number(Map<String, Object> m, String field) throws IOException {
        Long v = optionalNumber(m, field);
        return v == null ? 0 : v;
    }

    /** The field as a long; null when absent or null. */
    public static Long optionalNumber(Map<String, Object> m, String field) throws IOException {
        Object v = m.get(field);
        if (v == null) {
            return null;
        }
        if (v instanceof Number n && !(v instanceof Double)) {
            return n.longValue();
        }
        throw new IOException("field '" + field + "': expected an integer, got " + describe(v));
    }

    /** The field as an int, range-checked; 0 when absent or null. */
    public static int integer(Map<String, Object> m, String field) throws IOException {
        long v = number(m, field);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new IOException("field '" + field + "': " + v + " is out of range for an int");
        }
        return (int) v;
    }

    /** The field as a map of strings; empty when absent or null. */
    public static Map<String, String> strings(Map<String, Object> m, String field) throws IOException {
        Object v = m.get(field);
        if (v == null) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : object(v, "field '" + field + "'").entrySet()) {
            if (e.getValue() != null && !(e.getValue() instanceof String)) {
                throw new IOException("field '" + field + "." + e.getKey() + "': expected a string, got "
                        + describe(e.getValue()));
            }
            out.put(e.getKey(), (String) e.getValue());
        }
        return out;
    }

    /** The field as a list; empty when absent or null. */
    public static List<Object> list(Map<String, Object> m, String field) throws IOException {
        Object v = m.get(field);
        if (v == null) {
            return List.of();
        }
        if (v instanceof List<?> l) {
            @SuppressWarnings("unchecked")
            List<Object> list = (List<Object>) l;
            return list;
        }
        throw new IOException("field '" + field + "': expected an array, got " + describe(v));
    }

    private static String describe(Object v) {
        return v == null ? "null" : v instanceof Map ? "an object" : v instanceof List ? "an array"
                : v instanceof String ? "a string" : v instanceof Boolean ? "a boolean" : "a number";
    }

    /**
     * Writes maps (keys as strings), collections, arrays of objects, strings, numbers, booleans and null; an enum as
     * its name, anything else as its {@code toString()}. {@code pretty} indents as Jackson's default printer does.
     */
    public static byte[] write(Object value, boolean pretty) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            if (pretty) {
                g.setPrettyPrinter(new DefaultPrettyPrinter());
            }
            writeValue(g, value);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write JSON to memory", e);   // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    private static void writeValue(JsonGenerator g, Object v) throws IOException {
        switch (v) {
            case null -> g.writeNull();
            case String s -> g.writeString(s);
            case Boolean b -> g.writeBoolean(b);
            case Integer i -> g.writeNumber(i);
            case Long l -> g.writeNumber(l);
            case Double d -> g.writeNumber(d);
            case Float f -> g.writeNumber(f);
            case Number n -> g.writeNumber(n.toString());
            case Map<?, ?> m -> {
                g.writeStartObject();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    g.writeFieldName(String.valueOf(e.getKey()));
                    writeValue(g, e.getValue());
                }
                g.writeEndObject();
            }
            case Collection<?> c -> {
                g.writeStartArray();
                for (Object o : c) {
                    writeValue(g, o);
                }
                g.writeEndArray();
            }
            case Object[] a -> writeValue(g, Arrays.asList(a));
            case Enum<?> e -> g.writeString(e.name());
            default -> g.writeString(v.toString());
        }
    }
}
