package dev.weft.dataplane.http;

import dev.weft.protocol.WmpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/**
 * HTTP/1.1 heads that keep their fields in the WMP header list they came from (or were filtered into), for the
 * hop between WMP and HTTP/1.1: an answer from a peer sidecar on its way to the local app, a request from the mesh on
 * its way to the local app. Netty's header map (a hash table and an entry object per field) is built only when
 * something calls {@link HttpMessage#headers()}: the streaming and error paths, which go through Netty's encoder. The
 * usual path reads and edits the list with {@link #has} and {@link #set}, and {@link Http1Writer} writes it as it is.
 * JFR put the header maps among the largest allocations per request in each sidecar (docs/benchmarks.md).
 *
 * <p>Names in the list are lower case (WMP's rule, which its decoder enforces), so lookups here take lower-case
 * names. Thread: one Worker loop at a time; not thread safe.
 */
public final class WmpHeads {
    private WmpHeads() {}

    /** An answer head (status and fields) from a WMP RESPONSE frame. */
    public static HttpResponse response(int status, WmpHeaders fields) {
        return new Response(HttpResponseStatus.valueOf(status), fields);
    }

    /** A request head for the local app, its fields already filtered for this hop ({@link ProxyHeaders}). */
    public static HttpRequest request(HttpMethod method, String uri, WmpHeaders fields) {
        return new Request(method, uri, fields);
    }

    /** Whether {@code m} has a field {@code lowerName}, without building a header map for it. */
    public static boolean has(HttpMessage m, String lowerName) {
        if (m instanceof Head h && h.map == null) {
            return h.fields.get(lowerName) != null;
        }
        return m.headers().contains(lowerName);
    }

    /** Sets the field {@code lowerName} of {@code m} to one value, without building a header map for it. */
    public static void set(HttpMessage m, String lowerName, String value) {
        if (m instanceof Head h && h.map == null) {
            h.fields.set(lowerName, value);
        } else {
            m.headers().set(lowerName, value);
        }
    }

    /** Writes each field of {@code m} as {@code name: value} and CRLF, in order. */
    static void writeFields(HttpMessage m, ByteBuf out) {
        if (m instanceof Head h && h.map == null) {
            WmpHeaders f = h.fields;
            for (int i = 0; i < f.size(); i++) {
                Http1Writer.writeField(out, f.name(i), f.value(i));
            }
        } else {
            for (var it = m.headers().iteratorCharSequence(); it.hasNext(); ) {
                var e = it.next();
                Http1Writer.writeField(out, e.getKey(), e.getValue());
            }
        }
    }

    /** How many fields {@code m} has (to size a buffer). */
    static int size(HttpMessage m) {
        return m instanceof Head h && h.map == null ? h.fields.size() : m.headers().size();
    }

    /** What both kinds share: the list, and the map once asked for (from then on the map is the truth). */
    private abstract static sealed class Head implements HttpMessage permits Response, Request {
        final WmpHeaders fields;
        HttpHeaders map;
        private DecoderResult decoderResult = DecoderResult.SUCCESS;

        Head(WmpHeaders fields) {
            this.fields = fields;
        }

        @Override
        public HttpHeaders headers() {
            if (map == null) {
                map = new DefaultHttpHeaders();
                ProxyHeaders.toHttp(fields, map);
            }
            return map;
        }

        @Override
        public HttpVersion protocolVersion() {
            return HttpVersion.HTTP_1_1;
        }

        @Override
        @Deprecated
        public HttpVersion getProtocolVersion() {
            return protocolVersion();
        }

        void checkVersion(HttpVersion version) {
            if (version != HttpVersion.HTTP_1_1) {
                throw new UnsupportedOperationException("a head crossing the mesh is HTTP/1.1, not " + version);
            }
        }

        @Override
        public DecoderResult decoderResult() {
            return decoderResult;
        }

        @Override
        @Deprecated
        public DecoderResult getDecoderResult() {
            return decoderResult;
        }

        @Override
        public void setDecoderResult(DecoderResult result) {
            this.decoderResult = result;
        }
    }

    private static final class Response extends Head implements HttpResponse {
        private HttpResponseStatus status;

        Response(HttpResponseStatus status, WmpHeaders fields) {
            super(fields);
            this.status = status;
        }

        @Override
        public HttpResponseStatus status() {
            return status;
        }

        @Override
        @Deprecated
        public HttpResponseStatus getStatus() {
            return status;
        }

        @Override
        public HttpResponse setStatus(HttpResponseStatus status) {
            this.status = status;
            return this;
        }

        @Override
        public HttpResponse setProtocolVersion(HttpVersion version) {
            checkVersion(version);
            return this;
        }

        @Override
        public String toString() {
            return "HTTP/1.1 " + status + " " + (map != null ? map : fields);
        }
    }

    private static final class Request extends Head implements HttpRequest {
        private HttpMethod method;
        private String uri;

        Request(HttpMethod method, String uri, WmpHeaders fields) {
            super(fields);
            this.method = method;
            this.uri = uri;
        }

        @Override
        public HttpMethod method() {
            return method;
        }

        @Override
        @Deprecated
        public HttpMethod getMethod() {
            return method;
        }

        @Override
        public HttpRequest setMethod(HttpMethod method) {
            this.method = method;
            return this;
        }

        @Override
        public String uri() {
            return uri;
        }

        @Override
        @Deprecated
        public String getUri() {
            return uri;
        }

        @Override
        public HttpRequest setUri(String uri) {
            this.uri = uri;
            return this;
        }

        @Override
        public HttpRequest setProtocolVersion(HttpVersion version) {
            checkVersion(version);
            return this;
        }

        @Override
        public String toString() {
            return method + " " + uri + " HTTP/1.1 " + (map != null ? map : fields);
        }
    }
}
