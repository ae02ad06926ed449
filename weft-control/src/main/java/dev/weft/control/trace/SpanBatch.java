package dev.weft.control.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.util.Arrays;

/**
 * One posted batch of Zipkin v2 spans, parsed in one streaming pass (jackson-core, no tree) into reused primitive
 * arrays: the fields queries need and where each span's own JSON sits in the body, which is what queries return (as
 * received). Ids become longs and names {@link NameTable} ids, so parsing a span makes no String (only a name never
 * seen before is copied once).
 *
 * <p>The whole batch is parsed before any of it is stored, so a malformed batch is refused whole (400). Each name id
 * the batch holds is retained until {@link #release}, so that evictions while the batch is stored cannot free (and
 * reuse) an id the batch still refers to. Reused for every batch by the store's single thread.
 */
final class SpanBatch {
    private static final JsonFactory JSON = new JsonFactory();

    byte[] body;
    int size;
    long[] traceHi = new long[64];
    long[] traceLo = new long[64];
    /** Whether the trace id had 32 hex digits (else 16). */
    boolean[] wide = new boolean[64];
    long[] id = new long[64];
    /** 0 when the span has no parent. */
    long[] parentId = new long[64];
    long[] timestamp = new long[64];
    long[] duration = new long[64];
    int[] name = new int[64];
    int[] kind = new int[64];
    int[] local = new int[64];
    int[] remote = new int[64];
    boolean[] error = new boolean[64];
    int[] start = new int[64];
    int[] length = new int[64];

    private NameTable names;

    /**
     * Parses {@code body} (a JSON array of spans), replacing what the batch held; call {@link #release} once done.
     *
     * @throws IllegalArgumentException naming what was wrong, for a 400 answer (the batch is then empty)
     */
    void parse(byte[] body, NameTable names) {
        this.body = body;
        this.names = names;
        size = 0;
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
                if (size == traceHi.length) {
                    grow();
                }
                parseSpan(p, size, (int) p.currentTokenLocation().getByteOffset());
                size++;
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            release();
            throw new IllegalArgumentException("malformed span JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            release();
            throw new IllegalArgumentException("unreadable span JSON: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            release();
            throw e;
        }
    }

    /** Gives back the batch's references to names and the body. */
    void release() {
        if (names != null) {
            for (int i = 0; i < size; i++) {
                names.release(name[i]);
                names.release(kind[i]);
                names.release(local[i]);
                names.release(remote[i]);
            }
        }
        size = 0;
        body = null;
    }

    private void parseSpan(JsonParser p, int i, int from) throws IOException {
        // The slot's names are set first so that release() is right even when this span fails half way.
        name[i] = kind[i] = local[i] = remote[i] = -1;
        boolean hasTrace = false;
        boolean hasId = false;
        parentId[i] = 0;
        timestamp[i] = 0;
        duration[i] = 0;
        error[i] = false;
        String badTrace = null;
        String badId = null;
        try {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                switch (field) {
                    case "traceId" -> {
                        int n = hexLength(p, v);
                        if (n == 16 || n == 32) {
                            char[] c = p.getTextCharacters();
                            int off = p.getTextOffset();
                            wide[i] = n == 32;
                            traceHi[i] = n == 32 ? hex(c, off, 16) : 0;
                            traceLo[i] = hex(c, off + n - 16, 16);
                            hasTrace = true;
                        } else {
                            hasTrace = false;
                            badTrace = v == JsonToken.VALUE_NULL ? null : p.getText();
                        }
                    }
                    case "id" -> {
                        hasId = hexLength(p, v) == 16;
                        if (hasId) {
                            id[i] = hex(p.getTextCharacters(), p.getTextOffset(), 16);
                        } else {
                            badId = v == JsonToken.VALUE_NULL ? null : p.getText();
                        }
                    }
                    case "parentId" -> parentId[i] = hexLength(p, v) == 16
                            ? hex(p.getTextCharacters(), p.getTextOffset(), 16) : 0;
                    case "kind" -> kind[i] = replace(kind[i], name(p, v, false));
                    case "name" -> name[i] = replace(name[i], name(p, v, false));
                    case "timestamp" -> timestamp[i] = v.isNumeric() ? p.getLongValue() : 0;
                    case "duration" -> duration[i] = v.isNumeric() ? p.getLongValue() : 0;
                    case "localEndpoint" -> local[i] = replace(local[i], serviceName(p, v));
                    case "remoteEndpoint" -> remote[i] = replace(remote[i], serviceName(p, v));
                    case "tags" -> error[i] = hasErrorTag(p, v);
                    default -> p.skipChildren();
                }
            }
        } catch (IOException | RuntimeException e) {
            size = i + 1; // so that release() gives back this span's names too
            throw e;
        }
        if (!hasTrace) {
            size = i + 1;
            throw new IllegalArgumentException("span without a valid traceId (expected 16 or 32 hex digits), got "
                    + badTrace);
        }
        if (!hasId) {
            size = i + 1;
            throw new IllegalArgumentException("span without a valid id (expected 16 hex digits), got " + badId);
        }
        start[i] = from;
        length[i] = (int) p.currentTokenLocation().getByteOffset() + 1 - from;
    }

    /** A repeated field keeps its last value, as a map would. */
    private int replace(int old, int now) {
        names.release(old);
        return now;
    }

    /** The number of hex digits of a string value, or -1 when it is not a string of hex digits only. */
    private static int hexLength(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.VALUE_STRING) {
            p.skipChildren();
            return -1;
        }
        char[] c = p.getTextCharacters();
        int off = p.getTextOffset();
        int n = p.getTextLength();
        for (int k = 0; k < n; k++) {
            if (Character.digit(c[off + k], 16) < 0 || c[off + k] > 'f') {
                return -1;
            }
        }
        return n == 0 ? -1 : n;
    }

    private static long hex(char[] c, int off, int n) {
        long v = 0;
        for (int k = 0; k < n; k++) {
            v = (v << 4) | Character.digit(c[off + k], 16);
        }
        return v;
    }

    /** A string value's name id (retained), or -1 for null, a non-string or (for services) an empty name. */
    private int name(JsonParser p, JsonToken v, boolean service) throws IOException {
        if (v == JsonToken.VALUE_NULL) {
            return -1;
        }
        if (!v.isScalarValue()) {
            p.skipChildren();
            return -1;
        }
        if (v != JsonToken.VALUE_STRING) {
            String s = p.getText(); // a number or boolean where a name belongs: rare, kept as its text
            return names.retain(s.toCharArray(), 0, s.length(), service);
        }
        int n = p.getTextLength();
        if (service && n == 0) {
            return -1;
        }
        return names.retain(p.getTextCharacters(), p.getTextOffset(), n, service);
    }

    /** localEndpoint/remoteEndpoint.serviceName, lower case (Zipkin's convention). */
    private int serviceName(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return -1;
        }
        int id = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String f = p.currentName();
            JsonToken value = p.nextToken();
            if (f.equals("serviceName")) {
                names.release(id);
                id = name(p, value, true);
            } else {
                p.skipChildren();
            }
        }
        return id;
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

    private void grow() {
        int n = traceHi.length * 2;
        traceHi = Arrays.copyOf(traceHi, n);
        traceLo = Arrays.copyOf(traceLo, n);
        wide = Arrays.copyOf(wide, n);
        id = Arrays.copyOf(id, n);
        parentId = Arrays.copyOf(parentId, n);
        timestamp = Arrays.copyOf(timestamp, n);
        duration = Arrays.copyOf(duration, n);
        name = Arrays.copyOf(name, n);
        kind = Arrays.copyOf(kind, n);
        local = Arrays.copyOf(local, n);
        remote = Arrays.copyOf(remote, n);
        error = Arrays.copyOf(error, n);
        start = Arrays.copyOf(start, n);
        length = Arrays.copyOf(length, n);
    }

    // For tests and tools: one parsed span's fields as text.

    String traceId(int i) {
        return SpanStore.hexId(traceHi[i], traceLo[i], wide[i]);
    }

    String id(int i) {
        return SpanStore.hexId(0, id[i], false);
    }

    String parentId(int i) {
        return parentId[i] == 0 ? null : SpanStore.hexId(0, parentId[i], false);
    }

    String localService(int i) {
        return names.name(local[i]);
    }

    String remoteService(int i) {
        return names.name(remote[i]);
    }

    byte[] json(int i) {
        return Arrays.copyOfRange(body, start[i], start[i] + length[i]);
    }
}
