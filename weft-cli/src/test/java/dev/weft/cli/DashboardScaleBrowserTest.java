package dev.weft.cli;

import dev.weft.control.ControlPlane;
import dev.weft.testing.SyntheticRegistrations;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;

import static org.assertj.core.api.Assertions.assertThat;

/** The dashboard in headless Chromium with 200 services and 2,000 endpoints registered (no traffic): still usable. */
class DashboardScaleBrowserTest {

    @Test
    void withTwoHundredServicesTheMapKeepsSixtyAndTheFilterAndPagingFindTheRest() throws Exception {
        Path dataDir = Files.createTempDirectory("weft-dashboard-scale-browser");
        ControlPlane control = new ControlPlane().historyInterval(Duration.ofMillis(500));
        try {
            InetSocketAddress a = control.start(new InetSocketAddress("127.0.0.1", 0), dataDir);
            String base = "http://127.0.0.1:" + a.getPort();
            SyntheticRegistrations.register(base, dev.weft.registry.auth.ControlCredentials.readToken(
                    dataDir.resolve(dev.weft.control.ca.AdminToken.FILE)), 200, 10, Duration.ofMinutes(2));
            String out = BrowserScript.run("dashboard-scale.mjs", base);
            assertThat(out).contains("map: 60 of 200 services drawn", "filter: svc-19 shows its 10 services",
                    "sidecars: 200 of 2000 shown, then 400");
        } finally {
            control.close();
            try (var files = Files.walk(dataDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
