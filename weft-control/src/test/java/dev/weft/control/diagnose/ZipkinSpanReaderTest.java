package dev.weft.control.diagnose;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which stored spans take part in culprit finding: a sidecar's span exported only because its exchange failed while
 * its trace was not sampled ({@code weft.sampling: error}) does not, so that every failure exported beside a sample of
 * the successes cannot inflate an error rate.
 */
class ZipkinSpanReaderTest {

    private static final String FAILED = ZipkinJson.span(new DiagnoseSpan("4bf92f3577b34da6a3ce929d0e0e4736",
            "1111111111111111", null, true, "a", "b", 1_700_000_000_000_000L, 5_000, 0, 503, "no-capacity", null,
            null));

    private static DiagnoseSpan read(String json) {
        return ZipkinSpanReader.read(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void a_sampled_failed_span_is_read_with_its_error() {
        DiagnoseSpan s = read(FAILED);
        assertThat(s).isNotNull();
        assertThat(s.status()).isEqualTo(503);
        assertThat(s.error()).isEqualTo("no-capacity");
    }

    @Test
    void a_span_exported_for_its_error_alone_is_left_out() {
        String errorOnly = FAILED.replace("\"error\":\"no-capacity\"",
                "\"error\":\"no-capacity\",\"weft.sampling\":\"error\"");
        assertThat(errorOnly).isNotEqualTo(FAILED);
        assertThat(read(errorOnly)).isNull();
    }
}
