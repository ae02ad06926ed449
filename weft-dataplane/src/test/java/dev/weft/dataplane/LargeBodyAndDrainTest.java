package dev.weft.dataplane;

import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/** Memory bounds for huge bodies, and the graceful drain. */
class LargeBodyAndDrainTest {

    @Test
    void aOneGibUploadThroughTwoSidecarsArrivesIntactWithBoundedMemory() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp(); TestApp consumerApp = new TestApp()) {
            mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");

            MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
            System.gc();
            long heapBefore = mem.getHeapMemoryUsage().getUsed();
            AtomicLong peakDirect = new AtomicLong();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = Thread.ofVirtual().start(() -> {
                while (sampling.get()) {
                    peakDirect.accumulateAndGet(PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory(), Math::max);
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });

            long total = 1L << 30;
            byte[] block = new byte[1 << 20];
            for (int i = 0; i < block.length; i++) {
                block[i] = (byte) (i ^ (i >>> 8));
            }
            CRC32 crc = new CRC32();
            try (RawHttp c = new RawHttp(port)) {
                c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + total + "\r\n\r\n");
                OutputStream out = c.out();
                for (long sent = 0; sent < total; sent += block.length) {
                    out.write(block);
                    crc.update(block);
                }
                out.flush();
                RawHttp.Response r = c.read();
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.body()).isEqualTo(total + " " + crc.getValue() + " POST /echo");
            } finally {
                sampling.set(false);
                sampler.join(1000);
            }
            System.gc();
            long heapAfter = mem.getHeapMemoryUsage().getUsed();
            // Flow control bounds what each sidecar holds per stream (256 KiB window); pooled chunks add a little.
            assertThat(peakDirect.get()).as("peak pooled direct memory").isLessThan(64L << 20);
            assertThat(heapAfter - heapBefore).as("heap growth").isLessThan(32L << 20);
        }
    }

    @Test
    void aDrainingSidecarFinishesRequestsInFlightDeregistersAndStopsAccepting() throws Exception {
        try (MeshFixture mesh = new MeshFixture("event-loop"); TestApp app = new TestApp(); TestApp consumerApp = new TestApp()) {
            Sidecar provider = mesh.provider("provider", "p1", app.address(), 1, 10);
            Sidecar consumer = mesh.consumer(consumerApp.address(), List.of("provider"), false);
            int port = MeshFixture.port(consumer, "upstream provider");
            int providerInbound = MeshFixture.port(provider, "inbound");
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

            CompletableFuture<HttpResponse<String>> slow = http.sendAsync(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/slow?ms=1500")).timeout(Duration.ofSeconds(20)).build(),
                    HttpResponse.BodyHandlers.ofString());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (app.inFlight.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(app.inFlight.get()).isEqualTo(1);

            Thread drainer = Thread.ofVirtual().start(provider::drain);
            HttpResponse<String> r = slow.get(20, TimeUnit.SECONDS);
            assertThat(r.statusCode()).isEqualTo(200);
            drainer.join(Duration.ofSeconds(15));
            assertThat(drainer.isAlive()).isFalse();

            // Deregistered: the consumer's view empties, so new calls are refused by name rather than sent to it.
            RawHttp.Response after = null;
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < deadline) {
                try (RawHttp c = new RawHttp(port)) {
                    after = c.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").read();
                }
                if (after.status() == 503) {
                    break;
                }
                Thread.sleep(50);
            }
            assertThat(after.status()).isEqualTo(503);
            assertThat(after.body()).contains("unknown service 'provider'");
            // And its inbound listener no longer accepts.
            assertThat(canConnect(providerInbound)).isFalse();
        }
    }

    private static boolean canConnect(int port) {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 1000);
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    static String ascii(byte[] b) {
        return new String(b, StandardCharsets.US_ASCII);
    }
}
