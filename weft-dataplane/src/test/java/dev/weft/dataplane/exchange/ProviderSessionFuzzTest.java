package dev.weft.dataplane.exchange;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.weft.dataplane.balancing.Balancer;
import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.balancing.EndpointState;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.downstream.WmpDownstream;
import dev.weft.dataplane.fuzz.Mutator;
import dev.weft.dataplane.fuzz.WmpSequences;
import dev.weft.dataplane.http.Http1RequestDecoder;
import dev.weft.dataplane.http.Http1Writer;
import dev.weft.dataplane.http.HttpLimits;
import dev.weft.dataplane.http.ProxyHeaders;
import dev.weft.dataplane.http.RequestHead;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpCodec;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameDecoder;
import dev.weft.protocol.WmpGoAway;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpPing;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.protocol.WmpWindowUpdate;
import dev.weft.registry.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 16's probe of the provider side, made a test: whatever bytes a peer sidecar sends, the real decoder,
 * {@link MeshSession}, {@link WmpDownstream} (with its validator) and inbound stack, in an EmbeddedChannel, leak no
 * buffer, throw nothing (an exception would close the shared connection without a GOAWAY), write only well-formed
 * WMP back (frames only on streams the peer opened, nothing on a stream after its CANCEL or its end, nothing after a
 * GOAWAY for an error), give back every slot of the app's capacity, and let through to the app only requests that
 * HTTP/1.1 carries exactly: written as the app's connection would get them, a strict decoder reads back the same
 * method, target, Host and fields, and a body that ended is as long as its Content-Length said.
 *
 * <p>The probe that found two {@code LEAK:}s and three uncaught IllegalArgumentExceptions fed 2,000 mutated frame
 * sequences; {@link #twoThousandMutatedFrameSequencesFromValidOnesBreakNoRule} does that with a fixed seed. The
 * fuzz target takes any bytes: {@code JAZZER_FUZZ=1 mvn -pl weft-dataplane -am test
 * -Dtest=ProviderSessionFuzzTest#aProviderKeepsEveryRuleWhateverThePeerSends -Dsurefire.failIfNoSpecifiedTests=false}
 * (docs/operations.md, "Fuzzing"); its corpus is the valid sequences ({@link WmpSequences#valid()}) and findings.
 *
 * <p>The app is in memory ({@link InMemoryUpstream}) so that each input runs the same way every time, and is
 * scripted by each request's path (see {@link WmpSequences}): answers whole or streamed, resets before or during
 * its answer, a protocol error, an unprocessed 503, a socket that backs up, or no answer at all.
 *
 * <p>Thread: the test's, which is the EmbeddedChannel's loop. Buffers: the input goes in as pooled direct buffers
 * and each is checked to be released once the connection is gone; so is every answer body the app gave
 * ({@link InMemoryUpstream#assertAnswersReleased()}); what the provider wrote is read and released here.
 */
class ProviderSessionFuzzTest {
    private static final String TARGET = "aProviderKeepsEveryRuleWhateverThePeerSends";
    /** The provider's reads: an odd size, so that frames are cut at every place across inputs. */
    private static final int READ = 61;

    /** Jazzer instruments the data plane and the protocol (see {@link Mutator#instrumentOnly}). */
    @BeforeAll
    static void instrumentWeft() {
        Mutator.instrumentOnly("dev.weft.dataplane.**:dev.weft.protocol.**");
    }

    @FuzzTest(maxDuration = "4m")
    void aProviderKeepsEveryRuleWhateverThePeerSends(byte[] input) {
        new Provider(new Tally()).run(input);
    }

    @Test
    void twoThousandMutatedFrameSequencesFromValidOnesBreakNoRule() {
        Random random = new Random(20261216);
        Mutator bytes = new Mutator(20261216, new byte[]{0x57, 0x01, 0x00, (byte) 0x80, '\r', '\n', ' '});
        List<List<WmpFrame>> valid = WmpSequences.valid();
        Tally tally = new Tally();
        for (int i = 0; i < 2000; i++) {
            byte[] input = WmpSequences.mutate(valid.get(i % valid.size()), random, bytes);
            try {
                new Provider(tally).run(input);
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("input " + i + " broke: " + HexFormat.of().formatHex(input), e);
            }
        }
        System.out.println("ProviderSessionFuzzTest: 2000 mutated sequences: " + tally);
        // The probe must reach every outcome, or it tests less than it says.
        assertThat(tally.toApp).as("requests that reached the app (%s)", tally).isGreaterThan(1000);
        assertThat(tally.refused).as("streams refused (%s)", tally).isGreaterThan(200);
        assertThat(tally.connectionErrors).as("connections ended by GOAWAY (%s)", tally).isGreaterThan(300);
        assertThat(tally.answered).as("answers sent (%s)", tally).isGreaterThan(500);
    }

    @Test
    void theValidSequencesReachTheAppAndAreAnsweredWithoutARefusal() {
        Tally tally = new Tally();
        for (List<WmpFrame> s : WmpSequences.valid()) {
            new Provider(tally).run(WmpSequences.encode(s));
        }
        assertThat(tally.refused).as("%s", tally).isZero();
        assertThat(tally.connectionErrors).as("%s", tally).isZero();
        assertThat(tally.toApp).as("%s", tally).isEqualTo(15);
        assertThat(tally.answered).as("%s", tally).isEqualTo(13);
    }

    @Test
    void theCorpusKeepsEveryRule() {
        for (byte[] input : Mutator.corpus(ProviderSessionFuzzTest.class, TARGET)) {
            aProviderKeepsEveryRuleWhateverThePeerSends(input);
        }
    }

    /** Outcomes over many inputs. */
    private static final class Tally {
        int toApp;
        int refused;
        int connectionErrors;
        int answered;

        @Override
        public String toString() {
            return toApp + " to the app, " + refused + " refused, " + connectionErrors + " connection errors, "
                    + answered + " answered";
        }
    }

    /** One provider connection, its app, and what the peer reads back. */
    private static final class Provider {
        private final Tally tally;
        private final SidecarMetrics metrics = new SidecarMetrics();
        private final InMemoryUpstream app = new InMemoryUpstream();
        private final Cluster cluster = new Cluster("provider", Balancer.named("least-request"), 4, Duration.ofSeconds(30));
        private final EmbeddedChannel ch = new EmbeddedChannel();
        /** The peer's side: decodes what the provider wrote. */
        private final EmbeddedChannel peer = new EmbeddedChannel(new WmpFrameDecoder(WmpLimits.defaults(), new WmpCodecMetrics()));
        private final List<ByteBuf> given = new ArrayList<>();
        /** Ids of the REQUESTs the session was given: the only streams the provider may write on. */
        private final Set<Integer> opened = new HashSet<>();
        private final Map<Integer, String> written = new HashMap<>();
        /** Steps each call's script took (-1: its head not yet checked), and the calls whose script ended. */
        private final Map<InMemoryUpstream.Call, Integer> steps = new HashMap<>();
        private final Set<InMemoryUpstream.Call> finished = new HashSet<>();
        private boolean goneAway;

        Provider(Tally tally) {
            this.tally = tally;
            // Two requests at once, four more queued: the capacity and the queue are part of what is fuzzed.
            cluster.update(List.of(new Endpoint("provider", "app", "127.0.0.1", 8080, 1, 2, Map.of())));
            PolicyStack stack = PolicyStack.inbound(cluster, app, Collaborator.named("event-loop"), metrics,
                    ExchangeObserver.NOOP, "provider");
            WmpCodec.install(ch.pipeline(), WmpLimits.defaults(), new WmpCodecMetrics());
            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    if (msg instanceof WmpRequest r) {
                        opened.add(r.streamId());
                    }
                    ctx.fireChannelRead(msg);
                }
            });
            ch.pipeline().addLast(new MeshSession(WmpDownstream.acceptor(stack, ch.eventLoop(), "peer"), "peer",
                    metrics.rejected));
        }

        void run(byte[] input) {
            for (int off = 0; off < input.length && ch.isOpen(); off += READ) {
                int n = Math.min(READ, input.length - off);
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(n).writeBytes(input, off, n);
                given.add(b);
                ch.writeInbound(b); // rethrows what reached the end of the pipeline
                readWritten();
                stepApp();
                readWritten();
            }
            for (int i = 0; i < 4 && ch.isOpen(); i++) { // the app's scripts run to their end
                stepApp();
                readWritten();
            }
            if (!ch.isOpen()) {
                assertThat(goneAway).as("the connection closed without a GOAWAY: an exception closed it").isTrue();
            }
            ch.finishAndReleaseAll();
            peer.finishAndReleaseAll();
            for (ByteBuf b : given) {
                assertThat(b.refCnt()).as("input bytes still held after the connection ended").isZero();
            }
            app.assertAnswersReleased();
            for (EndpointState e : cluster.endpoints()) {
                assertThat(e.inFlight()).as("slots of the app still taken after the connection ended").isZero();
            }
            tally.toApp += app.calls.size();
        }

        /** Decodes and checks what the provider wrote to the peer so far. */
        private void readWritten() {
            for (Object o; (o = ch.readOutbound()) != null; ) {
                peer.writeInbound(o);
            }
            assertThat((Object) peer.readOutbound()).as("the provider wrote bytes that are not WMP").isNull();
            for (WmpFrame f; (f = peer.readInbound()) != null; ) {
                try {
                    check(f);
                } finally {
                    f.release();
                }
            }
        }

        /** Per stream: "R" once a RESPONSE went, "E" once it ended, "C" once cancelled. */
        private void check(WmpFrame f) {
            assertThat(goneAway).as("%s written after a GOAWAY for an error", f).isFalse();
            String state = written.getOrDefault(f.streamId(), "");
            switch (f) {
                case WmpGoAway g -> {
                    if (g.error() != WmpError.NO_ERROR) {
                        goneAway = true;
                        tally.connectionErrors++;
                    }
                    assertThat(g.lastStreamId()).as("GOAWAY's last stream").isLessThanOrEqualTo(
                            opened.stream().mapToInt(Integer::intValue).max().orElse(0));
                }
                case WmpResponse r -> {
                    assertThat(opened).as("%s on a stream the peer did not open", f).contains(r.streamId());
                    assertThat(state).as("%s after %s", f, state).isEmpty();
                    written.put(r.streamId(), r.endStream() ? "RE" : "R");
                    tally.answered++;
                }
                case WmpData d -> {
                    assertThat(opened).as("%s on a stream the peer did not open", f).contains(d.streamId());
                    assertThat(state).as("%s after %s", f, state).isEqualTo("R");
                    written.put(d.streamId(), d.endStream() ? "RE" : "R");
                }
                case WmpCancel c -> {
                    assertThat(opened).as("%s on a stream the peer did not open", f).contains(c.streamId());
                    assertThat(state).as("%s after %s", f, state).doesNotContain("C");
                    written.put(c.streamId(), state + "C");
                    if (c.error() == WmpError.PROTOCOL_ERROR) {
                        tally.refused++;
                    }
                }
                case WmpWindowUpdate w -> {
                    assertThat(opened).as("%s on a stream the peer did not open", f).contains(w.streamId());
                    assertThat(state).as("%s after %s", f, state).doesNotContain("C");
                }
                case WmpPing p -> assertThat(p.ack()).as("a PING of our own: no time passes here").isTrue();
                case WmpRequest r -> throw new AssertionError("the provider opened a stream: " + r);
            }
        }

        /** One step of each open call's script, the oldest first; new calls' heads are checked first. */
        private void stepApp() {
            for (InMemoryUpstream.Call c : List.copyOf(app.calls)) {
                if (c.head == null) {
                    continue; // dialled, its head not sent yet
                }
                int n = steps.getOrDefault(c, -1);
                if (n == -1) {
                    whatTheAppReads(c);
                }
                steps.put(c, n + 1);
                if (!c.cancelled && n >= 0 && !done(c)) {
                    act(c, n);
                }
                checkBody(c);
            }
        }

        private boolean done(InMemoryUpstream.Call c) {
            return finished.contains(c);
        }

        /** The app's script, by the first letter of the path; {@code n}: the steps it has taken. */
        private void act(InMemoryUpstream.Call c, int n) {
            String path = c.head.path();
            char script = path.length() > 1 ? path.charAt(1) : '-';
            switch (script) {
                case 'a' -> end(c, () -> c.answer(200, "ok"));
                case 's' -> {
                    if (n == 0) {
                        c.answerHead(200, "part");
                    } else if (n == 1) {
                        c.answerData("more", false);
                    } else {
                        end(c, () -> c.answerData("end", true));
                    }
                }
                case 'r' -> end(c, () -> c.reset(false));
                case 'f' -> end(c, () -> c.reset(true));
                case 'e' -> end(c, () -> c.listener.onError(new ExchangeError(502, "app-protocol-error",
                        "the app answered with a malformed message", false)));
                case 'm' -> {
                    if (n == 0) {
                        c.answerHead(200, "part");
                    } else {
                        end(c, () -> c.reset(false));
                    }
                }
                case 'u' -> end(c, () -> c.answer(503, "busy", "x-weft-unprocessed", "true"));
                case 'w' -> {
                    if (n == 0) {
                        c.writable = false; // the app's socket backs up: the rest of the body waits
                    } else if (n == 2) {
                        c.writable = true;
                        c.listener.onWritable();
                    } else if (n > 2) {
                        end(c, () -> c.answer(200, "drained"));
                    }
                }
                default -> { } // held: never answered; the connection's end cancels it
            }
        }

        private void end(InMemoryUpstream.Call c, Runnable last) {
            finished.add(c);
            last.run();
        }

        /**
         * The head as the app's connection would get it ({@code HttpUpstream} writes these fields with
         * {@link Http1Writer}): it must be writable at all (the validator let nothing through that HTTP/1.1 cannot
         * carry) and read back by a strict HTTP/1.1 decoder as the same request, not as two or with other framing.
         */
        private void whatTheAppReads(InMemoryUpstream.Call c) {
            WmpHeaders fields = new WmpHeaders();
            for (int i = 0; i < c.fieldsAtSend.size(); i++) {
                fields.add(c.fieldsAtSend.name(i), c.fieldsAtSend.value(i));
            }
            RequestHead sent = new RequestHead(c.head.method(), c.authority, c.head.path(), fields);
            WmpHeaders forwarded = ProxyHeaders.forwardRequest(sent, c.clientAddress);
            ByteBuf wire = Http1Writer.requestHead(PooledByteBufAllocator.DEFAULT, sent, c.authority, forwarded);
            if (forwarded.size() > HttpLimits.MAX_HEADER_FIELDS || wire.readableBytes() > HttpLimits.MAX_HEADER_BYTES) {
                wire.release(); // within WMP's limits, but over what our own decoder takes: the app's limits decide
                return;
            }
            EmbeddedChannel appSide = new EmbeddedChannel(new Http1RequestDecoder(Duration.ZERO));
            appSide.writeInbound(wire);
            Object first = appSide.readInbound();
            try {
                assertThat(first).as("what the app reads of %s", c).isInstanceOf(RequestHead.class);
                RequestHead read = (RequestHead) first;
                assertThat(read.method()).isEqualTo(sent.method());
                assertThat(read.path()).isEqualTo(sent.path());
                assertThat(read.authority()).isEqualTo(c.authority);
                assertThat(read.fields()).as("fields the app reads").isEqualTo(forwarded);
            } finally {
                for (Object o; (o = appSide.readInbound()) != null; ) {
                    ReferenceCountUtil.release(o);
                }
                appSide.finishAndReleaseAll();
            }
        }

        /**
         * A body that ended is as long as its Content-Length said. The app keeps the body as text (UTF-8), so only
         * an ASCII body is counted in bytes.
         */
        private void checkBody(InMemoryUpstream.Call c) {
            String length = c.fieldsAtSend.get("content-length");
            String body = c.body();
            if (length != null && c.ended() && body.chars().allMatch(ch -> ch < 0x80)) {
                assertThat((long) body.length()).as("the body %s received", c).isEqualTo(Long.parseLong(length));
            }
        }
    }
}
