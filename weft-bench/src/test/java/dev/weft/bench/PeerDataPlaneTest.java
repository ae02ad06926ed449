package dev.weft.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PeerDataPlaneTest {
    private static final List<DataPlane.Upstream> PROVIDERS = List.of(
            new DataPlane.Upstream("small", 41001, 1, 200), new DataPlane.Upstream("medium", 41002, 2, 200),
            new DataPlane.Upstream("large", 41003, 3, 200));

    @ParameterizedTest
    @EnumSource(PeerDataPlane.Peer.class)
    void rendersEveryUpstreamAndLeavesNoPlaceholder(PeerDataPlane.Peer peer) {
        String config = PeerDataPlane.render(PeerDataPlane.template(peer), Path.of("/tmp/run"), "x-consumer", 40000,
                PROVIDERS, 0);
        assertThat(config).doesNotContain("{{#").doesNotContain("{{/").contains("40000")
                .contains("127.0.0.1:41001").contains("127.0.0.1:41002").contains("127.0.0.1:41003");
        assertThat(config.replaceAll("(?m)^\\s*#.*$", "")).doesNotContain("{{");
    }

    @Test
    void nginxAndHaproxyGetTheWeightsAndTheLimit() {
        String nginx = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                PROVIDERS, 0);
        assertThat(nginx).contains("server 127.0.0.1:41003 weight=3 max_conns=200;").contains("keepalive 512;");
        String haproxy = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h", 1,
                PROVIDERS, 0);
        assertThat(haproxy).contains("server medium 127.0.0.1:41002 weight 2 maxconn 200");
        String caddy = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.CADDY), Path.of("/r"), "c", 1,
                PROVIDERS, 0);
        assertThat(caddy).contains("to 127.0.0.1:41001 127.0.0.1:41002 127.0.0.1:41003")
                .contains("max_conns_per_host 200");
    }

    @Test
    void eachPeerRunsOnTheThreadsAskedForOrOnItsOwnDefault() {
        String nginx = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                PROVIDERS, 1);
        assertThat(nginx).contains("worker_processes 1;");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                PROVIDERS, 0)).contains("worker_processes auto;");
        String haproxy = PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h",
                1, PROVIDERS, 2);
        assertThat(haproxy).containsPattern("(?m)^global\\n(?:.*\\n)*?\\s+nbthread 2$");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h", 1,
                PROVIDERS, 0)).doesNotContainPattern("(?m)^\\s*nbthread");
        assertThat(new PeerDataPlane(PeerDataPlane.Peer.CADDY).withThreads(2).threads()).isEqualTo(2);
    }

    @Test
    void unequalCapacitiesGoToEachServerAndCaddysSingleLimitIsTheLargest() {
        List<DataPlane.Upstream> unequal = List.of(new DataPlane.Upstream("small", 41001, 1, 100),
                new DataPlane.Upstream("medium", 41002, 2, 200), new DataPlane.Upstream("large", 41003, 3, 300));
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.NGINX), Path.of("/r"), "n", 1,
                unequal, 0)).contains("server 127.0.0.1:41001 weight=1 max_conns=100;")
                .contains("server 127.0.0.1:41003 weight=3 max_conns=300;");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.HAPROXY), Path.of("/r"), "h", 1,
                unequal, 0)).contains("server small 127.0.0.1:41001 weight 1 maxconn 100")
                .contains("server large 127.0.0.1:41003 weight 3 maxconn 300");
        assertThat(PeerDataPlane.render(PeerDataPlane.template(PeerDataPlane.Peer.CADDY), Path.of("/r"), "c", 1,
                unequal, 0)).contains("max_conns_per_host 300");
    }

    @Test
    void anUnknownVariableFailsInsteadOfProducingABrokenProxy() {
        assertThatThrownBy(() -> PeerDataPlane.render("listen {{lsten_port}};", Path.of("/r"), "n", 1, PROVIDERS, 0))
                .hasMessageContaining("unknown template variable {{lsten_port}}");
    }
}
