package dev.weft.dataplane.exchange;

import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.http.ResponseHead;
import dev.weft.dataplane.upstream.Upstream;
import dev.weft.dataplane.upstream.UpstreamCall;
import dev.weft.dataplane.upstream.UpstreamListener;
import dev.weft.protocol.WmpHeaders;
import dev.weft.registry.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@link Upstream} in memory, for the exchange's state machine tests: it records every dial, and for each call the
 * head, each body piece (with its end flag), credit and cancel; the test answers through the call's
 * {@link UpstreamListener}. A dial can be made to fail ({@link #failNextOpen}).
 *
 * <p>Thread: the test's thread, which is the EmbeddedChannel's loop. Buffers: every request body given to a call is
 * copied into its record and released at once (the call owns it, as a real one would); every answer body the test
 * gives to a listener is made by {@link #buffer} and kept in {@link #given}, so that a test can check that the
 * exchange released or wrote each one ({@link #assertAnswersReleased()}). They come from the pooled allocator, whose
 * buffers Netty's leak detector tracks (it does not track {@code Unpooled} heap buffers).
 */
final class InMemoryUpstream implements Upstream {
    final List<Call> calls = new ArrayList<>();
    /** The endpoint id of every dial, failed ones included, in order. */
    final List<String> dialled = new ArrayList<>();
    final List<ByteBuf> given = new ArrayList<>();
    private final ArrayDeque<Throwable> failures = new ArrayDeque<>();

    /** The next dial fails with {@code cause} (a ConnectException, CircuitOpenException...). */
    void failNextOpen(Throwable cause) {
        failures.add(cause);
    }

    @Override
    public Future<UpstreamCall> open(EventLoop loop, Endpoint endpoint, String address, UpstreamListener listener) {
        dialled.add(endpoint.id());
        Throwable f = failures.poll();
        if (f != null) {
            return loop.newFailedFuture(f);
        }
        Call c = new Call(this, endpoint, listener);
        calls.add(c);
        return loop.newSucceededFuture(c);
    }

    Call call(int i) {
        assertThat(calls).as("calls made upstream").hasSizeGreaterThan(i);
        return calls.get(i);
    }

    Call last() {
        assertThat(calls).as("calls made upstream").isNotEmpty();
        return calls.getLast();
    }

    ByteBuf buffer(String text) {
        ByteBuf b = ByteBufUtil.writeUtf8(PooledByteBufAllocator.DEFAULT, text);
        given.add(b);
        return b;
    }

    void assertAnswersReleased() {
        for (ByteBuf b : given) {
            assertThat(b.refCnt()).as("an answer body given to the exchange was neither written nor released").isZero();
        }
    }

    /** One piece of request body as the call received it. */
    record Piece(String text, boolean end) {}

    /** One call: what the exchange sent on it, and the test's means to answer. */
    static final class Call implements UpstreamCall {
        private final InMemoryUpstream upstream;
        final Endpoint endpoint;
        final UpstreamListener listener;
        RequestHead head;
        String authority;
        String clientAddress;
        /** The body that rode with the head first, then each sendData. */
        final List<Piece> pieces = new ArrayList<>();
        /** Fields of the head as they were when it was sent (the exchange may edit its head later, on a retry). */
        WmpHeaders fieldsAtSend;
        int heads;
        boolean cancelled;
        long consumed;
        boolean writable = true;
        int awaitedWritable;

        Call(InMemoryUpstream upstream, Endpoint endpoint, UpstreamListener listener) {
            this.upstream = upstream;
            this.endpoint = endpoint;
            this.listener = listener;
        }

        @Override
        public void sendHead(RequestHead head, String authority, String clientAddress, ByteBuf body, boolean endStream) {
            heads++;
            this.head = head;
            this.authority = authority;
            this.clientAddress = clientAddress;
            WmpHeaders copy = new WmpHeaders();
            for (int i = 0; i < head.fields().size(); i++) {
                copy.add(head.fields().name(i), head.fields().value(i));
            }
            fieldsAtSend = copy;
            take(body, endStream);
        }

        @Override
        public void sendData(ByteBuf body, boolean endStream) {
            assertThat(heads).as("body sent before its head").isEqualTo(1);
            take(body, endStream);
        }

        private void take(ByteBuf body, boolean end) {
            assertThat(ended()).as("body sent after the end of the request").isFalse();
            pieces.add(new Piece(body.toString(StandardCharsets.UTF_8), end));
            body.release();
        }

        boolean ended() {
            return !pieces.isEmpty() && pieces.getLast().end();
        }

        /** The whole request body as received so far. */
        String body() {
            StringBuilder sb = new StringBuilder();
            pieces.forEach(p -> sb.append(p.text()));
            return sb.toString();
        }

        @Override
        public boolean canSend() {
            return writable;
        }

        @Override
        public void awaitWritable() {
            awaitedWritable++;
        }

        @Override
        public void consumed(int bytes) {
            consumed += bytes;
        }

        @Override
        public void cancel() {
            cancelled = true;
        }

        /** A whole answer with its Content-Length; {@code fields}: more name, value pairs. */
        void answer(int status, String body, String... fields) {
            WmpHeaders h = new WmpHeaders().add("content-length", Integer.toString(body.length()));
            for (int i = 0; i < fields.length; i += 2) {
                h.add(fields[i], fields[i + 1]);
            }
            listener.onResponseHead(new ResponseHead(status, h), upstream.buffer(body), true);
        }

        /** An answer's head with the first piece of a body of unknown length. */
        void answerHead(int status, String firstPiece) {
            listener.onResponseHead(new ResponseHead(status, new WmpHeaders()), upstream.buffer(firstPiece), false);
        }

        void answerData(String piece, boolean end) {
            listener.onResponseData(upstream.buffer(piece), end);
        }

        void reset(boolean refused) {
            listener.onReset("test reset", refused);
        }

        @Override
        public String toString() {
            return "call to " + endpoint.id() + " (" + (head == null ? "no head" : head.method() + " " + head.path()) + ")";
        }
    }
}
