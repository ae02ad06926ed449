package dev.weft.dataplane.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.weft.dataplane.http.Http1RequestDecoderTest.GET;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.POST;
import static dev.weft.dataplane.http.Http1RequestDecoderTest.transcript;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Http1RequestDecoder}'s request-head timeout, on the EmbeddedChannel's clock (advanced by hand, so no test
 * waits): a head still incomplete the timeout after its first byte gets one Rejected 408, a head that completes in
 * time and a connection idle between requests get nothing. Every buffer read out is released ({@link
 * Http1RequestDecoderTest#transcript}).
 */
class Http1RequestHeadTimeoutTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    private static EmbeddedChannel channel(Duration timeout) {
        EmbeddedChannel ch = new EmbeddedChannel(new Http1RequestDecoder(timeout));
        ch.freezeTime();
        return ch;
    }

    private static ByteBuf bytes(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1);
    }

    /** Moves the channel's clock on and runs what became due. */
    private static void advance(EmbeddedChannel ch, long millis) {
        ch.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
    }

    @Test
    void aHeadTrickledPastTheTimeoutGetsOne408AndNothingAfterIt() {
        EmbeddedChannel ch = channel(TIMEOUT);
        ch.writeInbound(bytes("GET /orders HT"));
        advance(ch, 400);
        ch.writeInbound(bytes("TP/1.1\r\nHo"));
        advance(ch, 400);
        ch.writeInbound(bytes("st: pro"));
        assertThat(transcript(ch)).isEmpty();

        advance(ch, 250); // 1.05 s after the first byte, although the last came 250 ms ago
        List<String> t = transcript(ch);
        assertThat(t).singleElement().asString()
                .startsWith("rejected 408 request-timeout: the request head was not complete 1s after its first byte")
                .contains("--request-head-timeout");

        ch.writeInbound(bytes("vider\r\n\r\n" + GET)); // the rest of the head, then a whole request: discarded
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aHeadStuckInItsFieldsIsTimedOutToo() {
        EmbeddedChannel ch = channel(TIMEOUT);
        ch.writeInbound(bytes("GET / HTTP/1.1\r\nHost: provider\r\n")); // the start line is whole, the head is not
        advance(ch, 999);
        assertThat(transcript(ch)).isEmpty();
        advance(ch, 1);
        assertThat(transcript(ch)).singleElement().asString().startsWith("rejected 408 request-timeout");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void aHeadCompletedInTimeIsNotTimedOutAndItsBodyIsNotTimed() {
        EmbeddedChannel ch = channel(TIMEOUT);
        String head = POST.substring(0, POST.indexOf("\r\n\r\n") + 4);
        ch.writeInbound(bytes(head.substring(0, 20)));
        advance(ch, 900);
        ch.writeInbound(bytes(head.substring(20)));
        assertThat(transcript(ch)).singleElement().asString().startsWith("POST /orders");

        advance(ch, 5_000); // the body is slow too: that is not the head timeout's business
        ch.writeInbound(bytes(POST.substring(head.length())));
        assertThat(transcript(ch)).containsExactly("body {\"id\": 7}\r\n", "END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void anIdleConnectionBetweenRequestsIsNeverTimedOut() {
        EmbeddedChannel ch = channel(TIMEOUT);
        ch.writeInbound(bytes(GET));
        assertThat(transcript(ch)).hasSize(2).last().isEqualTo("END");
        advance(ch, 3_600_000);
        assertThat(transcript(ch)).isEmpty();

        // A head that came in two reads leaves a check scheduled; idling past it after the head is not timed out.
        ch.writeInbound(bytes(GET.substring(0, 10)));
        ch.writeInbound(bytes(GET.substring(10)));
        assertThat(transcript(ch)).hasSize(2);
        advance(ch, 3_600_000);
        assertThat(transcript(ch)).isEmpty();

        ch.writeInbound(bytes("\r\n")); // a blank line between requests starts no head
        advance(ch, 3_600_000);
        ch.writeInbound(bytes(GET));
        assertThat(transcript(ch)).hasSize(2).last().isEqualTo("END");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void eachHeadHasTheWholeTimeoutFromItsOwnFirstByte() {
        EmbeddedChannel ch = channel(TIMEOUT);
        ch.writeInbound(bytes(GET.substring(0, 10))); // head 1 starts at 0: a check is due at 1 s
        advance(ch, 800);
        ch.writeInbound(bytes(GET.substring(10) + GET.substring(0, 10))); // head 1 ends, head 2 starts at 0.8 s
        assertThat(transcript(ch)).hasSize(2);
        advance(ch, 900); // 1.7 s: past head 1's check, within head 2's time
        assertThat(transcript(ch)).isEmpty();
        advance(ch, 100); // 1.8 s: head 2's second is up
        assertThat(transcript(ch)).singleElement().asString().startsWith("rejected 408 request-timeout");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void whileThisSideHasPausedReadingTheClockStartsAgain() {
        EmbeddedChannel ch = channel(TIMEOUT);
        ch.writeInbound(bytes(GET.substring(0, 10)));
        // As the downstream does while it answers an earlier request: the rest may be waiting unread in the socket.
        ch.config().setAutoRead(false);
        advance(ch, 5_000);
        assertThat(transcript(ch)).isEmpty();
        ch.config().setAutoRead(true);
        advance(ch, 5_000);
        assertThat(transcript(ch)).singleElement().asString().startsWith("rejected 408 request-timeout");
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void theDefaultIsTenSecondsAndZeroTurnsTheTimeoutOff() {
        EmbeddedChannel byDefault = new EmbeddedChannel(new Http1RequestDecoder());
        byDefault.freezeTime();
        byDefault.writeInbound(bytes("GET / HTTP/1.1\r\n"));
        advance(byDefault, 9_999);
        assertThat(transcript(byDefault)).isEmpty();
        advance(byDefault, 1);
        assertThat(transcript(byDefault)).singleElement().asString().contains("not complete 10s after");
        assertThat(byDefault.finish()).isFalse();

        EmbeddedChannel off = channel(Duration.ZERO);
        off.writeInbound(bytes("GET / HTTP/1.1\r\n"));
        advance(off, 3_600_000);
        assertThat(transcript(off)).isEmpty();
        off.writeInbound(bytes("Host: x\r\n\r\n"));
        assertThat(transcript(off)).hasSize(2).last().isEqualTo("END");
        assertThat(off.finish()).isFalse();
    }
}
