package dev.weft.dataplane;

import dev.weft.dataplane.observe.ExchangeObserver.Direction;
import dev.weft.dataplane.observe.ObservabilityConfig;
import dev.weft.dataplane.observe.ObservabilityConfig.Propagation;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SidecarObservabilityFlagsTest {

    private static ObservabilityConfig parse(String... flags) {
        return SidecarFlags.parse(flags).observabilityConfig();
    }

    @Test
    void withoutFlagsEverythingIsOnWithTheDefaultSamplerToTheControlPlane() {
        ObservabilityConfig c = parse();
        assertThat(c).isEqualTo(ObservabilityConfig.defaults());
        assertThat(c.resolveTraceEndpoint("weft://10.0.0.1:7700")).hasToString("http://10.0.0.1:7700/api/v2/spans");
        assertThat(c.resolveTraceEndpoint("etcd://10.0.0.1:2379")).isNull();
        assertThat(c.resolveTraceEndpoint("weft+tls://10.0.0.1:7700?ca-pin=sha256:" + "00".repeat(32)))
                .hasToString("https://10.0.0.1:7700/api/v2/spans");
    }

    @Test
    void theControlPlanesTrustFlagsGoWithATlsRegistryOnly() {
        String pin = "sha256:" + "1f".repeat(32);
        assertThat(SidecarFlags.parse("--registry", "weft+tls://10.0.0.1:7700", "--control-ca-pin", pin).config()
                .registryUrl()).isEqualTo("weft+tls://10.0.0.1:7700?ca-pin=" + pin.replace(":", "%3A"));
        assertThatThrownBy(() -> SidecarFlags.parse("--registry", "weft://10.0.0.1:7700", "--control-ca-pin", pin)
                .config()).hasMessageContaining("its URL is weft+tls://HOST:PORT");
    }

    @Test
    void flagsTurnThingsOffAndPointSpansElsewhere() {
        ObservabilityConfig c = parse("--metrics", "off", "--tracing", "on", "--trace-sample", "0.25",
                "--trace-endpoint", "http://otel:4318/v1/traces", "--trace-format", "otlp",
                "--trace-propagation", "b3multi", "--access-log", "stdout", "--access-log", "inbound=off",
                "--route-label", "users=GET:/users");
        assertThat(c.metrics()).isFalse();
        assertThat(c.traceSample()).isEqualTo(0.25);
        assertThat(c.resolveTraceEndpoint("weft://x:1")).hasToString("http://otel:4318/v1/traces");
        assertThat(c.propagation()).isEqualTo(Set.of(Propagation.B3MULTI));
        assertThat(c.accessLogs()).isEqualTo(Map.of(Direction.OUTBOUND, "stdout"));
        assertThat(c.routes()).singleElement().satisfies(r -> {
            assertThat(r.name()).isEqualTo("users");
            assertThat(r.method()).isEqualTo("GET");
            assertThat(r.prefix()).isEqualTo("/users");
        });
        assertThat(parse("--tracing", "off").resolveTraceEndpoint("weft://x:1")).isNull();
    }

    @Test
    void theSamplerIsAReservoirASecondThenARatioAndBothAreFlags() {
        ObservabilityConfig defaults = parse();
        assertThat(defaults.traceReservoir()).isEqualTo(ObservabilityConfig.DEFAULT_TRACE_RESERVOIR);
        assertThat(defaults.traceSample()).isEqualTo(ObservabilityConfig.DEFAULT_TRACE_SAMPLE);
        assertThat(parse("--trace-reservoir", "50/s").traceReservoir()).isEqualTo(50);
        assertThat(parse("--trace-reservoir", "0").traceReservoir()).isZero();
        ObservabilityConfig all = parse("--trace-sample", "1");
        assertThat(all.traceSample()).isEqualTo(1.0);
        assertThat(all.traceReservoir()).isEqualTo(ObservabilityConfig.DEFAULT_TRACE_RESERVOIR);
        assertThatThrownBy(() -> parse("--trace-reservoir", "lots")).hasMessageContaining(
                "invalid --trace-reservoir 'lots' (expected N/s");
        assertThatThrownBy(() -> parse("--trace-reservoir", "-1/s")).hasMessageContaining("expected N/s");
    }

    @Test
    void badValuesNameTheFlagAndTheExpectedForm() {
        assertThatThrownBy(() -> parse("--metrics", "maybe")).hasMessageContaining("invalid --metrics 'maybe' (expected on or off)");
        assertThatThrownBy(() -> parse("--trace-sample", "2")).hasMessageContaining("expected 0.0 to 1.0");
        assertThatThrownBy(() -> parse("--trace-endpoint", "zipkin:9411")).hasMessageContaining("expected an http URL");
        assertThatThrownBy(() -> parse("--trace-format", "otlp")).hasMessageContaining("needs a trace endpoint URL");
        assertThatThrownBy(() -> parse("--trace-propagation", "jaeger")).hasMessageContaining("expected: w3c, b3, b3multi");
        assertThatThrownBy(() -> parse("--access-log", "sideways=x")).hasMessageContaining("expected inbound or outbound");
        assertThatThrownBy(() -> parse("--route-label", "nope")).hasMessageContaining("NAME=[METHOD:]PATH_PREFIX");
    }

    @Test
    void aBadFlagIsAUsageErrorWithExitCodeTwo() {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new SidecarCommand()).setErr(new PrintWriter(err))
                .execute("--service", "s", "--app", "127.0.0.1:1", "--trace-sample", "7");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("trace sample 7.0 out of range", "Usage:");
    }
}
