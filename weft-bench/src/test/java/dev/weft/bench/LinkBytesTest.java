package dev.weft.bench;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class LinkBytesTest {
    private static final String SS = """
            0      0      127.0.0.1:37309 127.0.0.1:44566
            \t cubic wscale:10,10 rto:204 bytes_sent:7 bytes_acked:7 bytes_received:100 segs_out:2
            0      0      127.0.0.1:37309 127.0.0.1:44570
            \t cubic wscale:10,10 rto:204 bytes_sent:70 bytes_acked:60 bytes_received:1000 segs_out:2
            """;

    @Test
    void parsesEachConnectionsReceivedAndAckedBytes() {
        Map<String, LinkBytes.Counters> sockets = LinkBytes.parse(SS);
        assertThat(sockets).containsEntry("127.0.0.1:37309 127.0.0.1:44566", new LinkBytes.Counters(100, 7))
                .containsEntry("127.0.0.1:37309 127.0.0.1:44570", new LinkBytes.Counters(1000, 60));
    }

    @Test
    void countsNewConnectionsFromZeroAndReportsClosedOnes() {
        Map<String, LinkBytes.Counters> before = Map.of("a", new LinkBytes.Counters(100, 10),
                "gone", new LinkBytes.Counters(5, 5));
        Map<String, LinkBytes.Counters> after = Map.of("a", new LinkBytes.Counters(150, 30),
                "new", new LinkBytes.Counters(7, 3));
        LinkBytes.Delta delta = LinkBytes.delta(before, after);
        assertThat(delta).isEqualTo(new LinkBytes.Delta(57, 23, 2, 1));
        assertThat(LinkBytes.delta(null, after).known()).isFalse();
    }

    @Test
    void countsTheBytesOfARealLoopbackConnectionAtTheAcceptingSide() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
             Socket accepted = server.accept()) {
            Map<String, LinkBytes.Counters> before = LinkBytes.snapshot(Set.of(server.getLocalPort()));
            OutputStream out = client.getOutputStream();
            out.write(new byte[300]);
            out.flush();
            InputStream in = accepted.getInputStream();
            in.readNBytes(300);
            accepted.getOutputStream().write(new byte[40]);
            client.getInputStream().readNBytes(40);
            // The 40 bytes count once the client's ACK is back (a delayed ACK may take a while on a busy machine).
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            LinkBytes.Delta delta = LinkBytes.delta(before, LinkBytes.snapshot(Set.of(server.getLocalPort())));
            while (delta.fromProviders() < 40 && System.nanoTime() < deadline) {
                Thread.sleep(10);
                delta = LinkBytes.delta(before, LinkBytes.snapshot(Set.of(server.getLocalPort())));
            }
            assertThat(delta.toProviders()).isEqualTo(300);
            assertThat(delta.fromProviders()).isEqualTo(40);
            assertThat(delta.connections()).isEqualTo(1);
        }
    }
}
