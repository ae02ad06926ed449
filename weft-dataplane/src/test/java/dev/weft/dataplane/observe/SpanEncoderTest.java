package dev.weft.dataplane.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SpanEncoderTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Times are nanoTime values; the span's clock starts at epoch 1_700_000_000_000_000 µs. */
    private static final long T0 = 5_000_000_000L;
    private static final long EPOCH = 1_700_000_000_000_000L;

    /** An outbound exchange: 0.2 ms in the queue, 0.1 ms connecting, the peer answering after 10 ms, 12 ms in all. */
    static ObservedExchange finishedOutbound() {
        ObservedExchange x = new ObservedExchange(null, null, Direction.OUTBOUND, "consumer", "POST",
                "/orders/42?token=secret", "127.0.0.1:5555", "orders", T0, EPOCH);
        x.traceHi = 0x4bf92f3577b34da6L;
        x.traceLo = 0xa3ce929d0e0e4736L;
        x.parentId = 0x00f067aa0ba902b7L;
        x.spanId = 0x1111111111111111L;
        x.sampled = TracePropagation.SAMPLED;
        x.destination = "provider";
        x.endpointId = "provider-1";
        x.endpointAddress = "127.0.0.1:7001";
        x.attempts = 2;
        x.admittedNanos = T0 + 200_000;
        x.connectedNanos = T0 + 300_000;
        x.sentNanos = T0 + 350_000;
        x.firstByteNanos = T0 + 10_350_000;
        x.endNanos = T0 + 12_000_000;
        x.status = 502;
        x.upstreamStatus = 200;
        x.bytesIn = 5;
        x.bytesOut = 7;
        x.error = "upstream-reset";
        return x;
    }

    @Test
    void anOutboundExchangeIsAZipkinClientSpanWithItsStepsAsAnnotations() throws Exception {
        JsonNode spans = JSON.readTree(SpanEncoder.named("zipkin").encode(List.of(finishedOutbound())));
        assertThat(spans).hasSize(1);
        JsonNode s = spans.get(0);
        assertThat(s.get("traceId").asText()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(s.get("parentId").asText()).isEqualTo("00f067aa0ba902b7");
        assertThat(s.get("id").asText()).isEqualTo("1111111111111111");
        assertThat(s.get("kind").asText()).isEqualTo("CLIENT");
        assertThat(s.get("name").asText()).isEqualTo("post orders");
        assertThat(s.get("timestamp").asLong()).isEqualTo(EPOCH);
        assertThat(s.get("duration").asLong()).isEqualTo(12_000);
        assertThat(s.at("/localEndpoint/serviceName").asText()).isEqualTo("consumer");
        assertThat(s.at("/remoteEndpoint/serviceName").asText()).isEqualTo("provider");
        assertThat(s.at("/remoteEndpoint/ipv4").asText()).isEqualTo("127.0.0.1");
        assertThat(s.at("/remoteEndpoint/port").asInt()).isEqualTo(7001);
        List<String> steps = new ArrayList<>();
        List<Long> at = new ArrayList<>();
        s.get("annotations").forEach(a -> {
            steps.add(a.get("value").asText());
            at.add(a.get("timestamp").asLong() - EPOCH);
        });
        assertThat(steps).containsExactly("admitted", "connected", "sent", "first-byte");
        assertThat(at).containsExactly(200L, 300L, 350L, 10_350L);
        JsonNode tags = s.get("tags");
        assertThat(tags.get("http.method").asText()).isEqualTo("POST");
        assertThat(tags.get("http.path").asText()).as("no query string in spans").isEqualTo("/orders/42");
        assertThat(tags.get("http.status_code").asText()).isEqualTo("502");
        assertThat(tags.get("weft.upstream.status_code").asText()).isEqualTo("200");
        assertThat(tags.get("weft.route").asText()).isEqualTo("orders");
        assertThat(tags.get("weft.endpoint").asText()).isEqualTo("provider-1");
        assertThat(tags.get("weft.attempts").asText()).isEqualTo("2");
        assertThat(tags.get("error").asText()).isEqualTo("upstream-reset");
        assertThat(tags.get("weft.bytes_in").asText()).isEqualTo("5");
    }

    @Test
    void anInboundRootExchangeHasNoParentAndNamesThePeerByAddress() throws Exception {
        ObservedExchange x = new ObservedExchange(null, null, Direction.INBOUND, "provider", "GET", "/", "/10.0.0.9:4000",
                RouteTable.DEFAULT, T0, EPOCH);
        x.traceLo = 7;
        x.spanId = 8;
        x.endNanos = T0 + 500;
        x.status = 200;
        JsonNode s = JSON.readTree(SpanEncoder.named("zipkin").encode(List.of(x))).get(0);
        assertThat(s.has("parentId")).isFalse();
        assertThat(s.get("kind").asText()).isEqualTo("SERVER");
        assertThat(s.get("name").asText()).isEqualTo("get");
        assertThat(s.get("duration").asLong()).as("Zipkin needs a duration of at least 1 µs").isEqualTo(1);
        assertThat(s.at("/remoteEndpoint/ipv4").asText()).isEqualTo("10.0.0.9");
        assertThat(s.at("/remoteEndpoint/serviceName").isMissingNode()).isTrue();
        assertThat(s.get("tags").has("error")).isFalse();
        assertThat(s.get("annotations")).isEmpty();
    }

    @Test
    void otlpCarriesTheSameSpanAsResourceScopeAndSpanWithEvents() throws Exception {
        JsonNode root = JSON.readTree(SpanEncoder.named("otlp").encode(List.of(finishedOutbound())));
        JsonNode rs = root.at("/resourceSpans/0");
        assertThat(rs.at("/resource/attributes/0/key").asText()).isEqualTo("service.name");
        assertThat(rs.at("/resource/attributes/0/value/stringValue").asText()).isEqualTo("consumer");
        JsonNode span = rs.at("/scopeSpans/0/spans/0");
        assertThat(span.get("traceId").asText()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(span.get("parentSpanId").asText()).isEqualTo("00f067aa0ba902b7");
        assertThat(span.get("kind").asInt()).isEqualTo(3);
        assertThat(span.get("startTimeUnixNano").asText()).isEqualTo(EPOCH + "000");
        assertThat(span.get("endTimeUnixNano").asText()).isEqualTo((EPOCH + 12_000) + "000");
        assertThat(span.at("/events/3/name").asText()).isEqualTo("first-byte");
        assertThat(span.at("/status/code").asInt()).isEqualTo(2);
        List<String> keys = new ArrayList<>();
        span.get("attributes").forEach(a -> keys.add(a.get("key").asText()));
        assertThat(keys).contains("http.request.method", "url.path", "http.response.status_code", "http.route",
                "server.address", "server.port", "peer.service", "error.type");
    }

    @Test
    void aSpanExportedForItsErrorAloneSaysSoInBothFormatsAndASampledOneDoesNot() throws Exception {
        ObservedExchange sampled = finishedOutbound();
        ObservedExchange errorOnly = finishedOutbound();
        errorOnly.sampled = TracePropagation.NOT_SAMPLED;
        errorOnly.sampleReason = TraceSampler.ERROR;

        JsonNode zipkin = JSON.readTree(SpanEncoder.named("zipkin").encode(List.of(sampled, errorOnly)));
        assertThat(zipkin.get(0).get("tags").has("weft.sampling")).isFalse();
        assertThat(zipkin.get(1).at("/tags/weft.sampling").asText()).isEqualTo("error");

        JsonNode otlp = JSON.readTree(SpanEncoder.named("otlp").encode(List.of(errorOnly)));
        List<String> attributes = new ArrayList<>();
        otlp.at("/resourceSpans/0/scopeSpans/0/spans/0/attributes")
                .forEach(a -> attributes.add(a.get("key").asText() + "=" + a.at("/value/stringValue").asText()));
        assertThat(attributes).contains("weft.sampling=error");
    }
}
