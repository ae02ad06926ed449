package dev.weft.examples;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The provider's injected faults, set at run time through POST /fault. */
class ProviderFaultsTest {
    private ProviderServer provider;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void stop() {
        if (provider != null) {
            provider.close();
        }
        http.close();
    }

    private HttpResponse<String> send(String method, String pathAndQuery, Duration timeout) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + HostPort.of(provider.address()) + pathAndQuery))
                .timeout(timeout).method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anErrorRateOfOneAnswersEveryRequest500AndIsReportedBack() throws Exception {
        provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "small", 200, Duration.ofMillis(1), 1));
        HttpResponse<String> set = send("POST", "/fault?error-rate=1", Duration.ofSeconds(5));
        assertThat(set.body()).contains("\"errorRate\":1.0");
        assertThat(send("GET", "/?data=x", Duration.ofSeconds(5)).statusCode()).isEqualTo(500);
        send("POST", "/fault?error-rate=0", Duration.ofSeconds(5));
        assertThat(send("GET", "/?data=x", Duration.ofSeconds(5)).statusCode()).isEqualTo(200);
    }

    @Test
    void aStalledProviderAdmitsButNeverAnswers() throws Exception {
        provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "small", 200, Duration.ofMillis(1), 1));
        send("POST", "/fault?stall=true", Duration.ofSeconds(5));
        assertThatThrownBy(() -> send("GET", "/?data=x", Duration.ofMillis(500))).isInstanceOf(HttpTimeoutException.class);
        assertThat(provider.stats().maxInFlight()).as("admitted, held, never answered").isEqualTo(1);
    }

    @Test
    void aStalledRequestFreesItsSlotWhenTheCallerClosesTheConnection() throws Exception {
        provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "small", 200, Duration.ofMillis(1), 1));
        send("POST", "/fault?stall=true", Duration.ofSeconds(5));
        try (java.net.Socket s = new java.net.Socket(provider.address().getAddress(), provider.address().getPort())) {
            s.getOutputStream().write("GET /?data=x HTTP/1.1\r\nHost: p\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            awaitInFlight(1);
        }
        awaitInFlight(0);
    }

    private void awaitInFlight(int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (provider.stats().inFlight() != n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("in flight stayed " + provider.stats().inFlight() + ", expected " + n);
            }
            Thread.sleep(10);
        }
    }

    @Test
    void aBadFaultParameterIsRefusedWithTheExpectedForm() throws Exception {
        provider = ProviderServer.start(new ProviderServer.Settings(new HostPort("127.0.0.1", 0), "small", 200, Duration.ofMillis(1), 1));
        HttpResponse<String> r = send("POST", "/fault?factor=fast", Duration.ofSeconds(5));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("expected factor=NUMBER");
    }
}
