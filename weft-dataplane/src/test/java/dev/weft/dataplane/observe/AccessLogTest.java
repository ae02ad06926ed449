package dev.weft.dataplane.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

class AccessLogTest {

    @Test
    void aLineIsOneJsonObjectWithTraceRouteEndpointStatusBytesAndDurations() throws Exception {
        JsonText sb = new JsonText(64);
        AccessLog.format(SpanEncoderTest.finishedOutbound(), sb);
        assertThat(sb.toString()).doesNotContain("\n");
        JsonNode line = new ObjectMapper().readTree(sb.toString());
        assertThat(line.get("time").asText()).isEqualTo("2023-11-14T22:13:20Z");
        assertThat(line.get("direction").asText()).isEqualTo("outbound");
        assertThat(line.get("path").asText()).isEqualTo("/orders/42?token=secret");
        assertThat(line.get("route").asText()).isEqualTo("orders");
        assertThat(line.get("dst_service").asText()).isEqualTo("provider");
        assertThat(line.get("endpoint").asText()).isEqualTo("provider-1");
        assertThat(line.get("endpoint_address").asText()).isEqualTo("127.0.0.1:7001");
        assertThat(line.get("status").asInt()).isEqualTo(502);
        assertThat(line.get("upstream_status").asInt()).isEqualTo(200);
        assertThat(line.get("error").asText()).isEqualTo("upstream-reset");
        assertThat(line.get("bytes_in").asLong()).isEqualTo(5);
        assertThat(line.get("bytes_out").asLong()).isEqualTo(7);
        assertThat(line.get("duration_ms").decimalValue()).isEqualByComparingTo("12.000");
        assertThat(line.get("queue_ms").decimalValue()).isEqualByComparingTo("0.200");
        assertThat(line.get("connect_ms").decimalValue()).isEqualByComparingTo("0.100");
        assertThat(line.get("upstream_ms").decimalValue()).isEqualByComparingTo("10.000");
        assertThat(line.get("attempts").asInt()).isEqualTo(2);
        assertThat(line.get("trace_id").asText()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(line.get("span_id").asText()).isEqualTo("1111111111111111");
    }

    @Test
    void aSinkThatNeverDrainsMakesLinesDropAndCountNeverWaits() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        OutputStream stuck = new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[]{(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        AccessLog log = new AccessLog(Direction.INBOUND, "stuck", stuck, true, 16);
        log.start();
        ObservedExchange x = SpanEncoderTest.finishedOutbound();
        int offered = 100_000;
        for (int i = 0; i < offered; i++) {
            log.offer(x); // returns at once whatever the sink does: this loop ending is the point
        }
        // Each line is dropped, queued, written (into the buffer) or in the writer's hands; the three reads are not
        // atomic, so a line moving from the queue to the writer meanwhile may count once more or once less.
        long accounted = log.dropped() + log.queued() + log.written();
        assertThat(accounted).isBetween((long) offered - 2, (long) offered + 1);
        assertThat(log.dropped()).isGreaterThan(offered - 16 - 1000L);
        assertThat(log.queued()).isLessThanOrEqualTo(16);
        release.countDown();
        log.close();
    }
}
