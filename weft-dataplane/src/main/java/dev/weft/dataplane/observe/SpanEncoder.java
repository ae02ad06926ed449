package dev.weft.dataplane.observe;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;

import java.util.List;
import java.util.Locale;

/**
 * Encodes a batch of finished exchanges as spans: Zipkin v2 JSON ({@code POST /api/v2/spans}) or OTLP/HTTP JSON
 * ({@code POST /v1/traces}). One span per sidecar side of an RPC: {@code CLIENT} for the outbound side, {@code SERVER}
 * for the inbound side, with the steps as annotations (OTLP: events) named {@value #ADMITTED}, {@value #CONNECTED},
 * {@value #SENT} and {@value #FIRST_BYTE}; the span's end is the last answer byte. docs/observability.md lists every
 * attribute.
 *
 * <p>Runs on the exporter thread only.
 */
abstract class SpanEncoder {
    static final String ADMITTED = "admitted";
    static final String CONNECTED = "connected";
    static final String SENT = "sent";
    static final String FIRST_BYTE = "first-byte";
    /** Long paths are cut: a span is a diagnosis aid, not an archive of query strings. */
    static final int MAX_PATH = 256;

    abstract String contentType();

    abstract String encode(List<ObservedExchange> batch);

    static SpanEncoder named(String format) {
        return switch (format) {
            case "zipkin" -> new Zipkin();
            case "otlp" -> new Otlp();
            default -> throw new IllegalArgumentException("unknown trace format '" + format + "' (expected: zipkin, otlp)");
        };
    }

    static String spanName(ObservedExchange x) {
        return RouteTable.DEFAULT.equals(x.route) ? x.method : x.method + " " + x.route;
    }

    /** The path without its query string (which may carry secrets), cut to {@link #MAX_PATH}. */
    static String pathOf(ObservedExchange x) {
        String p = x.path;
        int q = p.indexOf('?');
        if (q >= 0) {
            p = p.substring(0, q);
        }
        return p.length() > MAX_PATH ? p.substring(0, MAX_PATH) : p;
    }

    /** "host:port", "/1.2.3.4:5" or "name/1.2.3.4:5" (InetSocketAddress.toString) → {host, port}, or null. */
    static String[] hostPort(String address) {
        if (address == null) {
            return null;
        }
        String a = address;
        int slash = a.lastIndexOf('/');
        if (slash >= 0) {
            a = a.substring(slash + 1);
        }
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || colon == a.length() - 1) {
            return null;
        }
        String host = a.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new String[]{host, a.substring(colon + 1)};
    }

    static boolean isIpv4(String host) {
        int dots = 0;
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            if (c == '.') {
                dots++;
            } else if (c < '0' || c > '9') {
                return false;
            }
        }
        return dots == 3;
    }

    static String errorOf(ObservedExchange x) {
        if (x.error != null) {
            return x.error;
        }
        return x.status >= 500 ? String.valueOf(x.status) : null;
    }

    /** Zipkin v2: a JSON array of spans. */
    static final class Zipkin extends SpanEncoder {
        @Override
        String contentType() {
            return "application/json";
        }

        @Override
        String encode(List<ObservedExchange> batch) {
            StringBuilder sb = new StringBuilder(batch.size() * 700);
            JsonText j = new JsonText(sb);
            j.beginArray();
            for (ObservedExchange x : batch) {
                span(j, x);
            }
            j.endArray();
            return sb.toString();
        }

        private static void span(JsonText j, ObservedExchange x) {
            j.beginObject();
            j.field("traceId", x.traceIdHex());
            if (x.parentId != 0) {
                j.field("parentId", Hex.of(x.parentId));
            }
            j.field("id", Hex.of(x.spanId));
            j.field("kind", x.direction == Direction.OUTBOUND ? "CLIENT" : "SERVER");
            j.field("name", spanName(x).toLowerCase(Locale.ROOT));
            j.field("timestamp", x.startEpochMicros);
            j.field("duration", Math.max(1, x.durationMicros()));
            j.name("localEndpoint").beginObject().field("serviceName", x.localService).endObject();
            String[] remote = hostPort(x.direction == Direction.OUTBOUND ? x.endpointAddress : x.peer);
            boolean remoteName = x.direction == Direction.OUTBOUND && !ObservedExchange.UNKNOWN.equals(x.destination);
            if (remote != null || remoteName) {
                j.name("remoteEndpoint").beginObject();
                if (remoteName) {
                    j.field("serviceName", x.destination);
                }
                if (remote != null) {
                    if (isIpv4(remote[0])) {
                        j.field("ipv4", remote[0]);
                    } else if (remote[0].indexOf(':') >= 0) {
                        j.field("ipv6", remote[0]);
                    }
                    try {
                        j.field("port", Integer.parseInt(remote[1]));
                    } catch (NumberFormatException e) {
                        // a malformed address: the tag below still shows it
                    }
                }
                j.endObject();
            }
            j.name("annotations").beginArray();
            annotation(j, x, x.admittedNanos, ADMITTED);
            annotation(j, x, x.connectedNanos, CONNECTED);
            annotation(j, x, x.sentNanos, SENT);
            annotation(j, x, x.firstByteNanos, FIRST_BYTE);
            j.endArray();
            j.name("tags").beginObject();
            j.field("http.method", x.method);
            j.field("http.path", pathOf(x));
            j.field("http.status_code", String.valueOf(x.status));
            j.field("weft.direction", x.direction == Direction.OUTBOUND ? "outbound" : "inbound");
            j.field("weft.route", x.route);
            if (x.endpointId != null) {
                j.field("weft.endpoint", x.endpointId);
                j.field("weft.endpoint.address", x.endpointAddress);
            }
            if (x.peer != null) {
                j.field("weft.peer", x.peer);
            }
            if (x.attempts > 1) {
                j.field("weft.attempts", String.valueOf(x.attempts));
            }
            if (x.upstreamStatus != 0 && x.upstreamStatus != x.status) {
                j.field("weft.upstream.status_code", String.valueOf(x.upstreamStatus));
            }
            j.field("weft.bytes_in", String.valueOf(x.bytesIn));
            j.field("weft.bytes_out", String.valueOf(x.bytesOut));
            String error = errorOf(x);
            if (error != null) {
                j.field("error", error);
            }
            if (x.error != null) {
                j.field("weft.error", x.error);
            }
            j.endObject();
            j.endObject();
        }

        private static void annotation(JsonText j, ObservedExchange x, long nanos, String value) {
            if (nanos != 0) {
                j.beginObject().field("timestamp", x.epochMicros(nanos)).field("value", value).endObject();
            }
        }
    }

    /** OTLP/HTTP with the JSON encoding: one resource (this sidecar's service), one scope, the batch's spans. */
    static final class Otlp extends SpanEncoder {
        private static final int KIND_SERVER = 2;
        private static final int KIND_CLIENT = 3;
        private static final int STATUS_ERROR = 2;

        @Override
        String contentType() {
            return "application/json";
        }

        @Override
        String encode(List<ObservedExchange> batch) {
            StringBuilder sb = new StringBuilder(batch.size() * 900);
            JsonText j = new JsonText(sb);
            j.beginObject().name("resourceSpans").beginArray().beginObject();
            j.name("resource").beginObject().name("attributes").beginArray();
            attr(j, "service.name", batch.isEmpty() ? "" : batch.getFirst().localService);
            j.endArray().endObject();
            j.name("scopeSpans").beginArray().beginObject();
            j.name("scope").beginObject().field("name", "weft").field("version", "0.1.0").endObject();
            j.name("spans").beginArray();
            for (ObservedExchange x : batch) {
                span(j, x);
            }
            j.endArray().endObject().endArray().endObject().endArray().endObject();
            return sb.toString();
        }

        private static void span(JsonText j, ObservedExchange x) {
            boolean outbound = x.direction == Direction.OUTBOUND;
            j.beginObject();
            j.field("traceId", x.traceIdHex());
            j.field("spanId", Hex.of(x.spanId));
            if (x.parentId != 0) {
                j.field("parentSpanId", Hex.of(x.parentId));
            }
            j.field("name", spanName(x));
            j.field("kind", outbound ? KIND_CLIENT : KIND_SERVER);
            // int64 travels as a decimal string in OTLP/JSON.
            j.field("startTimeUnixNano", x.startEpochMicros + "000");
            j.field("endTimeUnixNano", (x.startEpochMicros + Math.max(1, x.durationMicros())) + "000");
            j.name("attributes").beginArray();
            attr(j, "http.request.method", x.method);
            attr(j, "url.path", pathOf(x));
            intAttr(j, "http.response.status_code", x.status);
            attr(j, "http.route", x.route);
            attr(j, "weft.direction", outbound ? "outbound" : "inbound");
            if (outbound && !ObservedExchange.UNKNOWN.equals(x.destination)) {
                attr(j, "peer.service", x.destination);
            }
            String[] remote = hostPort(outbound ? x.endpointAddress : x.peer);
            if (remote != null) {
                attr(j, outbound ? "server.address" : "client.address", remote[0]);
                try {
                    intAttr(j, outbound ? "server.port" : "client.port", Integer.parseInt(remote[1]));
                } catch (NumberFormatException e) {
                    // left out
                }
            }
            if (x.endpointId != null) {
                attr(j, "weft.endpoint", x.endpointId);
            }
            if (x.attempts > 1) {
                intAttr(j, "weft.attempts", x.attempts);
            }
            intAttr(j, "weft.bytes_in", x.bytesIn);
            intAttr(j, "weft.bytes_out", x.bytesOut);
            String error = errorOf(x);
            if (error != null) {
                attr(j, "error.type", error);
            }
            j.endArray();
            j.name("events").beginArray();
            event(j, x, x.admittedNanos, ADMITTED);
            event(j, x, x.connectedNanos, CONNECTED);
            event(j, x, x.sentNanos, SENT);
            event(j, x, x.firstByteNanos, FIRST_BYTE);
            j.endArray();
            if (error != null) {
                j.name("status").beginObject().field("code", STATUS_ERROR).field("message", error).endObject();
            }
            j.endObject();
        }

        private static void event(JsonText j, ObservedExchange x, long nanos, String name) {
            if (nanos != 0) {
                j.beginObject().field("timeUnixNano", x.epochMicros(nanos) + "000").field("name", name).endObject();
            }
        }

        private static void attr(JsonText j, String key, String value) {
            j.beginObject().field("key", key).name("value").beginObject().field("stringValue", value).endObject()
                    .endObject();
        }

        private static void intAttr(JsonText j, String key, long value) {
            j.beginObject().field("key", key).name("value").beginObject().field("intValue", String.valueOf(value))
                    .endObject().endObject();
        }
    }
}
