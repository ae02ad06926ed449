package dev.weft.control.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One span as the control plane keeps it: the fields queries need, parsed once, and the span's own JSON bytes,
 * which are what queries return (Zipkin v2 form, as received).
 *
 * @param traceId       lower-case hex, 16 or 32 digits
 * @param timestamp     epoch microseconds (0 if absent)
 * @param duration      microseconds (0 if absent)
 * @param localService  localEndpoint.serviceName, lower case (Zipkin's convention), or null
 * @param remoteService remoteEndpoint.serviceName, lower case, or null
 * @param error         whether the span has an {@code error} tag
 */
public record StoredSpan(String traceId, String id, String parentId, String kind, String name, long timestamp,
                         long duration, String localService, String remoteService, boolean error, byte[] json) {

    private static final JsonFactory JSON = new JsonFactory();

    public long end() {
        return timestamp + duration;
    }

    /**
     * Parses a Zipkin v2 JSON array of spans in one streaming pass (no tree), slicing each span's bytes out of
     * {@code body}.
     *
     * @throws IllegalArgumentException naming what was wrong, for a 400 answer
     */
    public static List<StoredSpan> parseList(byte[] body) {
        List<StoredSpan> out = new ArrayList<>();
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_ARRAY) {
                throw new IllegalArgumentException("expected a JSON array of Zipkin v2 spans");
            }
            JsonToken t;
            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                if (t != JsonToken.START_OBJECT) {
                    throw new IllegalArgumentException("expected a span object at offset "
                            + p.currentTokenLocation().getByteOffset() + ", found " + t);
                }
                int start = (int) p.currentTokenLocation().getByteOffset();
                StoredSpan s = parseSpan(p, body, start);
                out.add(s);
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("malformed span JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new IllegalArgumentException("unreadable span JSON: " + e.getMessage());
        }
        return out;
    }

    private static StoredSpan parseSpan(JsonParser p, byte[] body, int start) throws IOException {
        String traceId = null;
        String id = null;
        String parentId = null;
        String kind = null;
        String name = null;
        long timestamp = 0;
        long duration = 0;
        String local = null;
        String remote = null;
        boolean error = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "traceId" -> traceId = text(p);
                case "id" -> id = text(p);
                case "parentId" -> parentId = text(p);
                case "kind" -> kind = text(p);
                case "name" -> name = text(p);
                case "timestamp" -> timestamp = v.isNumeric() ? p.getLongValue() : 0;
                case "duration" -> duration = v.isNumeric() ? p.getLongValue() : 0;
                case "localEndpoint" -> local = serviceName(p, v);
                case "remoteEndpoint" -> remote = serviceName(p, v);
                case "tags" -> error = hasErrorTag(p, v);
                default -> p.skipChildren();
            }
        }
        int end = (int) p.currentTokenLocation().getByteOffset() + 1;
        if (traceId == null || !isHex(traceId) || (traceId.length() != 16 && traceId.length() != 32)) {
            throw new IllegalArgumentException("span without a valid traceId (expected 16 or 32 hex digits), got "
                    + traceId);
        }
        if (id == null || !isHex(id) || id.length() != 16) {
            throw new IllegalArgumentException("span without a valid id (expected 16 hex digits), got " + id);
        }
        return new StoredSpan(traceId.toLowerCase(Locale.ROOT), id.toLowerCase(Locale.ROOT),
                parentId == null ? null : parentId.toLowerCase(Locale.ROOT), intern(kind), intern(name), timestamp,
                duration, intern(lower(local)), intern(lower(remote)), error, Arrays.copyOfRange(body, start, end));
    }

    private static String text(JsonParser p) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return null;
        }
        if (!p.currentToken().isScalarValue()) {
            p.skipChildren();
            return null;
        }
        return p.getText();
    }

    private static String serviceName(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return null;
        }
        String name = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String f = p.currentName();
            p.nextToken();
            if (f.equals("serviceName")) {
                name = text(p);
            } else {
                p.skipChildren();
            }
        }
        return name;
    }

    private static boolean hasErrorTag(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return false;
        }
        boolean error = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            if (p.currentName().equals("error")) {
                error = true;
            }
            p.nextToken();
            p.skipChildren();
        }
        return error;
    }

    /**
     * Kinds, names and services repeat in every span: one copy each saves a few hundred bytes per stored span. The
     * table is capped so that arbitrary names cannot grow it.
     */
    private static final java.util.concurrent.ConcurrentHashMap<String, String> INTERNED =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static final int MAX_INTERNED = 4096;

    private static String intern(String s) {
        if (s == null) {
            return null;
        }
        String known = INTERNED.get(s);
        if (known != null) {
            return known;
        }
        if (INTERNED.size() < MAX_INTERNED) {
            known = INTERNED.putIfAbsent(s, s);
            return known != null ? known : s;
        }
        return s;
    }

    private static String lower(String s) {
        return s == null || s.isEmpty() ? null : s.toLowerCase(Locale.ROOT);
    }

    private static boolean isHex(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
                return false;
            }
        }
        return !s.isEmpty();
    }
}
