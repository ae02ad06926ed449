package dev.weft.protocol;

import dev.weft.protocol.WmpTestSupport.Decoding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static dev.weft.protocol.WmpTestSupport.encode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The trace context held as numbers: written as exactly the text a {@code traceparent} field carries, read back
 * only from that form, and on the WMP wire the same bytes as the field sent as text, so that a peer sees no change.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class TraceparentTest {
    static final String TEXT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    static final Traceparent CONTEXT = new Traceparent(0x4bf92f3577b34da6L, 0xa3ce929d0e0e4736L, 0x00f067aa0ba902b7L, 1);

    static ByteBuf ascii(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1);
    }

    @Test
    void it_is_written_as_the_w3c_text_and_read_back_from_it() {
        assertThat(CONTEXT.toString()).isEqualTo(TEXT);
        ByteBuf b = ascii("xx" + TEXT);
        try {
            assertThat(Traceparent.read(b, 2)).isEqualTo(CONTEXT);
            assertThat(b.readerIndex()).as("indexes unchanged").isZero();
        } finally {
            b.release();
        }
        ByteBuf line = Unpooled.buffer();
        CONTEXT.writeLine(line);
        assertThat(line.toString(StandardCharsets.US_ASCII)).isEqualTo("traceparent: " + TEXT + "\r\n");
        assertThat(line.readableBytes()).isEqualTo(Traceparent.LINE_LENGTH);
        line.release();
    }

    @Test
    void every_flag_byte_and_id_digit_survives() {
        Traceparent t = new Traceparent(-1L, 0x0123456789abcdefL, 0xfedcba9876543210L, 0xa5);
        assertThat(t.toString()).isEqualTo("00-ffffffffffffffff0123456789abcdef-fedcba9876543210-a5");
        ByteBuf b = ascii(t.toString());
        assertThat(Traceparent.read(b, 0)).isEqualTo(t);
        b.release();
        assertThat(new Traceparent(0, 1, 1, 0).sampled()).isFalse();
        assertThat(new Traceparent(0, 1, 1, 3).sampled()).isTrue();
    }

    /** What a caller sends as text is read by W3C's rules, later versions included; each value's note says why. */
    @Test
    void text_from_outside_is_read_by_w3c_rules() {
        Traceparent t = new Traceparent(0x4bf92f3577b34da6L, 0xa3ce929d0e0e4736L, 0x00f067aa0ba902b7L, 1);
        String ids = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assertThat(Traceparent.parse("00-" + ids)).isEqualTo(t);
        assertThat(Traceparent.parse("00-" + ids.replace("-01", "-00")).sampled()).isFalse();
        assertThat(Traceparent.parse("01-" + ids)).as("a later version, same length").isEqualTo(t);
        assertThat(Traceparent.parse("cc-" + ids + "-what-comes-next")).as("a later version's extra fields")
                .isEqualTo(t);
        assertThat(Traceparent.parse(t.toString())).isEqualTo(t);
        for (String bad : new String[] {
                "00-" + ids + "-", // version 00 is exactly 55
                "01-" + ids + "x", // a later version's extra fields start with '-'
                "ff-" + ids, // the invalid version
                "0F-" + ids, "00-" + ids.toUpperCase(), // lower case only
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                "00-" + ids.replace("-01", "-0g"),
                "00-" + ids.substring(1),
                "00-" + ids.replace('-', '_'),
                ""}) {
            assertThat(Traceparent.parse(bad)).as(bad).isNull();
        }
    }

    /** Anything {@link Traceparent#write} would not give back byte for byte stays text, judged as a field. */
    @ParameterizedTest
    @ValueSource(strings = {
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", // upper case: W3C allows lower only
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // another version
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01", // trace id 0
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // parent 0
            "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba9\r\nb7-01",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
    void any_other_value_is_not_read(String value) {
        ByteBuf b = ascii(value);
        assertThat(Traceparent.read(b, 0)).isNull();
        b.release();
    }

    @Test
    void no_context_without_ids_or_with_a_flag_beyond_a_byte() {
        assertThatThrownBy(() -> new Traceparent(0, 0, 1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Traceparent(0, 1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Traceparent(0, 1, 1, 256)).isInstanceOf(IllegalArgumentException.class);
    }

    private static WmpRequest request(WmpHeaders fields, Traceparent tp) {
        return new WmpRequest(1, true, "GET", "provider", "/", fields, Unpooled.EMPTY_BUFFER, tp);
    }

    @Test
    void on_the_wmp_wire_it_is_the_same_bytes_as_the_field_sent_as_text_after_the_others() {
        ByteBuf asNumbers = encode(request(new WmpHeaders().add("accept", "*/*"), CONTEXT));
        ByteBuf asText = encode(request(new WmpHeaders().add("accept", "*/*").add("traceparent", TEXT), null));
        try {
            assertThat(ByteBufUtil.hexDump(asNumbers)).isEqualTo(ByteBufUtil.hexDump(asText));
            assertThat(WmpFrameEncoder.encodedSize(request(new WmpHeaders().add("accept", "*/*"), CONTEXT)))
                    .isEqualTo(asNumbers.readableBytes());
        } finally {
            asNumbers.release();
            asText.release();
        }
    }

    private static WmpRequest decodeOne(WmpFrame sent) {
        try (Decoding d = new Decoding()) {
            List<WmpFrame> frames = d.feed(encode(sent)).frames();
            assertThat(frames).hasSize(1);
            assertThat(d.metrics.totalErrors()).isZero();
            return (WmpRequest) frames.getFirst();
        }
    }

    @Test
    void a_decoder_takes_a_field_in_exactly_that_form_as_numbers() {
        WmpRequest r = decodeOne(request(new WmpHeaders().add("accept", "*/*").add("traceparent", TEXT)
                .add("tracestate", "congo=t61rcWkgMzE"), null));
        assertThat(r.traceparent()).isEqualTo(CONTEXT);
        assertThat(r.headers()).isEqualTo(new WmpHeaders().add("accept", "*/*").add("tracestate", "congo=t61rcWkgMzE"));
    }

    @Test
    void a_field_in_another_form_stays_a_field_as_sent() {
        String upper = TEXT.toUpperCase();
        WmpRequest r = decodeOne(request(new WmpHeaders().add("traceparent", upper), null));
        assertThat(r.traceparent()).isNull();
        assertThat(r.headers()).isEqualTo(new WmpHeaders().add("traceparent", upper));
    }

    @Test
    void two_traceparents_stay_two_fields_in_their_order() {
        String second = "00-11111111111111111111111111111111-00f067aa0ba902b7-01";
        WmpRequest r = decodeOne(request(new WmpHeaders().add("a", "1").add("traceparent", TEXT).add("b", "2")
                .add("traceparent", second), null));
        assertThat(r.traceparent()).isNull();
        assertThat(r.headers()).isEqualTo(new WmpHeaders().add("a", "1").add("traceparent", TEXT).add("b", "2")
                .add("traceparent", second));

        WmpRequest afterText = decodeOne(request(new WmpHeaders().add("traceparent", "bad")
                .add("traceparent", TEXT), null));
        assertThat(afterText.traceparent()).isNull();
        assertThat(afterText.headers()).isEqualTo(new WmpHeaders().add("traceparent", "bad").add("traceparent", TEXT));
    }

    /**
     * A sender may name the field literally instead of by its static-table index (Weft's encoder never does): it
     * stays text, and one in numbers' form after it stays text too, so the two keep their order.
     */
    @Test
    void a_traceparent_named_literally_stays_a_field_and_so_does_one_after_it() {
        WmpRequest alone = decodeLiterally(new WmpHeaders().add("a", "1").add("traceparenz", TEXT));
        assertThat(alone.traceparent()).isNull();
        assertThat(alone.headers()).isEqualTo(new WmpHeaders().add("a", "1").add("traceparent", TEXT));

        WmpRequest before = decodeLiterally(new WmpHeaders().add("traceparenz", "bad").add("traceparent", TEXT));
        assertThat(before.traceparent()).isNull();
        assertThat(before.headers()).isEqualTo(new WmpHeaders().add("traceparent", "bad").add("traceparent", TEXT));
    }

    /** Encodes {@code fields}, then renames the literal {@code traceparenz} on the wire to {@code traceparent}. */
    private static WmpRequest decodeLiterally(WmpHeaders fields) {
        ByteBuf wire = encode(request(fields, null));
        byte[] literal = "traceparenz".getBytes(StandardCharsets.US_ASCII);
        int at = ByteBufUtil.indexOf(Unpooled.wrappedBuffer(literal), wire);
        assertThat(at).as("the literal name on the wire").isNotNegative();
        wire.setByte(at + literal.length - 1, 't');
        try (Decoding d = new Decoding()) {
            List<WmpFrame> frames = d.feed(wire).frames();
            assertThat(d.metrics.totalErrors()).isZero();
            return (WmpRequest) frames.getFirst();
        }
    }

    @Test
    void a_traceparent_in_an_answer_stays_a_field() {
        try (Decoding d = new Decoding()) {
            WmpHeaders fields = new WmpHeaders().add("traceparent", TEXT);
            List<WmpFrame> frames = d.feed(encode(new WmpResponse(1, true, 200, fields, Unpooled.EMPTY_BUFFER)))
                    .frames();
            assertThat(((WmpResponse) frames.getFirst()).headers()).isEqualTo(new WmpHeaders().add("traceparent", TEXT));
        }
    }

    @Test
    void the_context_counts_toward_the_field_limit() {
        WmpHeaders two = new WmpHeaders().add("a", "1").add("b", "2");
        try (Decoding d = new Decoding(new WmpLimits(16 * 1024, 1024, 2))) {
            assertThat(d.feed(encode(request(two, CONTEXT))).frames()).isEmpty();
            assertThat(d.metrics.totalErrors()).isEqualTo(1);
            assertThat(d.written()).singleElement().isInstanceOfSatisfying(WmpGoAway.class,
                    g -> assertThat(g.debug()).contains("more than 2 header fields"));
        }
        try (Decoding d = new Decoding(new WmpLimits(16 * 1024, 1024, 3))) {
            assertThat(d.feed(encode(request(two, CONTEXT))).frames()).singleElement()
                    .isInstanceOfSatisfying(WmpRequest.class, r -> assertThat(r.traceparent()).isEqualTo(CONTEXT));
        }
    }
}
