package dev.weft.dataplane.mesh;

import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.metrics.Rejections.Reason;
import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpGoAway;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.protocol.WmpWindowUpdate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stream rules of docs/protocol.md ("Streams") on the real {@link MeshSession}, in an EmbeddedChannel: a REQUEST
 * with an even, reused or decreasing id, a second REQUEST on an open stream, a REQUEST to the side that dialled, and
 * any frame for a stream that was never opened end the connection with one GOAWAY {@code PROTOCOL_ERROR} that names
 * the last stream processed; late frames for a stream that did exist are dropped quietly.
 *
 * <p>Buffers: every body a test sends is made by {@link #body} from the pooled allocator (which the leak detector
 * tracks) and checked after the test to have been released by whoever owned it last: the session when it dropped the
 * frame, the stream's listener otherwise ({@link #everyBodyWasReleased}).
 */
class MeshSessionStreamRulesTest {
    private final Rejections rejected = new Rejections();
    private final List<ByteBuf> bodies = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    /** Streams the accepting side opened, in order, and the DATA each received. */
    private final List<MeshStream> accepted = new ArrayList<>();
    private final List<String> received = new ArrayList<>();

    @AfterEach
    void everyBodyWasReleased() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
        for (ByteBuf b : bodies) {
            assertThat(b.refCnt()).as("a body sent to the session was neither passed on nor released").isZero();
        }
    }

    private ByteBuf body(String s) {
        ByteBuf b = ByteBufUtil.writeUtf8(PooledByteBufAllocator.DEFAULT, s);
        bodies.add(b);
        return b;
    }

    /** The accepting side (a provider's inbound connection): a listener that takes each DATA and releases it. */
    private EmbeddedChannel accepting() {
        MeshSession.Acceptor acceptor = (stream, request) -> {
            request.release();
            accepted.add(stream);
            return new MeshStream.Listener() {
                @Override
                public void onData(WmpData data) {
                    received.add(stream.id() + ":" + data.body().toString(java.nio.charset.StandardCharsets.UTF_8));
                    data.release();
                }

                @Override
                public void onWritable() {
                }

                @Override
                public void onReset(String reason, boolean refused) {
                }
            };
        };
        EmbeddedChannel ch = new EmbeddedChannel(new MeshSession(acceptor, "peer", rejected));
        channels.add(ch);
        return ch;
    }

    private WmpRequest request(int id, boolean end) {
        return new WmpRequest(id, end, "POST", "provider", "/", new WmpHeaders(), body("req " + id));
    }

    private static void assertProtocolError(EmbeddedChannel ch, int lastStreamId) {
        Object out;
        WmpGoAway goAway = null;
        while ((out = ch.readOutbound()) != null) {
            if (out instanceof WmpGoAway g) {
                goAway = g;
            }
        }
        assertThat(goAway).as("a GOAWAY").isNotNull();
        assertThat(goAway.error()).isEqualTo(WmpError.PROTOCOL_ERROR);
        assertThat(goAway.lastStreamId()).as("the last stream processed").isEqualTo(lastStreamId);
        ch.runPendingTasks();
        assertThat(ch.isOpen()).as("closed once the GOAWAY is flushed").isFalse();
    }

    @Test
    void aRequestWithAnEvenStreamIdIsAConnectionError() {
        EmbeddedChannel ch = accepting();
        ch.writeInbound(request(1, false));
        ch.writeInbound(request(4, true));

        assertProtocolError(ch, 1);
        assertThat(accepted).hasSize(1);
        assertThat(rejected.count(Reason.STREAM_ID)).isEqualTo(1);
    }

    @Test
    void aRequestWithAStreamIdBelowThePreviousOneIsAConnectionError() {
        EmbeddedChannel ch = accepting();
        ch.writeInbound(request(5, true));
        ch.writeInbound(request(3, true));

        assertProtocolError(ch, 5);
        assertThat(accepted).extracting(MeshStream::id).containsExactly(5);
        assertThat(rejected.count(Reason.STREAM_ID)).isEqualTo(1);
    }

    @Test
    void aStreamIdUsedBeforeAndClosedSinceIsNotReused() {
        EmbeddedChannel ch = accepting();
        ch.writeInbound(request(1, true));
        accepted.getFirst().cancel(WmpError.CANCELLED); // the stream is over
        ch.writeInbound(request(1, true));

        assertProtocolError(ch, 1);
        assertThat(rejected.count(Reason.STREAM_ID)).isEqualTo(1);
    }

    @Test
    void aSecondRequestOnAnOpenStreamIsAConnectionError() {
        EmbeddedChannel ch = accepting();
        ch.writeInbound(request(1, false));
        ch.writeInbound(request(1, false));

        assertProtocolError(ch, 1);
        assertThat(accepted).hasSize(1);
        assertThat(rejected.count(Reason.SECOND_REQUEST)).isEqualTo(1);
    }

    @Test
    void dataOnAStreamNeverOpenedIsAConnectionError() {
        EmbeddedChannel ch = accepting();
        ch.writeInbound(request(1, false));
        ch.writeInbound(new WmpData(3, false, body("smuggled")));

        assertProtocolError(ch, 1);
        assertThat(received).isEmpty();
        assertThat(rejected.count(Reason.UNOPENED_STREAM)).isEqualTo(1);
    }

    @Test
    void dataOnAnEvenStreamIdIsAConnectionError() {
        EmbeddedChannel ch = accepting();
        ch.writeInbound(new WmpData(2, true, body("x")));

        assertProtocolError(ch, 0);
        assertThat(rejected.count(Reason.UNOPENED_STREAM)).isEqualTo(1);
    }

    @Test
    void cancelAndWindowUpdateForAStreamNeverOpenedAreConnectionErrorsButStreamZerosWindowIsIgnored() {
        EmbeddedChannel ignored = accepting();
        ignored.writeInbound(new WmpWindowUpdate(0, 1000)); // the connection's window: valid, unused in version 1
        assertThat(ignored.isOpen()).isTrue();
        assertThat((Object) ignored.readOutbound()).isNull();

        EmbeddedChannel cancel = accepting();
        cancel.writeInbound(new WmpCancel(9, WmpError.CANCELLED));
        assertProtocolError(cancel, 0);

        EmbeddedChannel window = accepting();
        window.writeInbound(new WmpWindowUpdate(7, 1000));
        assertProtocolError(window, 0);
        assertThat(rejected.count(Reason.UNOPENED_STREAM)).isEqualTo(2);
    }

    @Test
    void lateDataForAStreamThatClosedIsDroppedAndReleasedAndTheConnectionCarriesOn() {
        EmbeddedChannel ch = accepting();
        ch.writeInbound(request(1, false));
        accepted.getFirst().cancel(WmpError.CANCELLED); // we cancelled; the peer's DATA crossed our CANCEL
        ch.writeInbound(new WmpData(1, false, body("late")));
        ch.writeInbound(new WmpData(1, true, body("later")));
        ch.writeInbound(request(3, false));
        ch.writeInbound(new WmpData(3, true, body("fine")));

        assertThat(ch.isOpen()).isTrue();
        assertThat(received).containsExactly("3:fine");
        assertThat(rejected.count(Reason.UNOPENED_STREAM)).isZero();
    }

    @Test
    void everyFrameReadAfterTheErrorIsReleasedUnread() {
        EmbeddedChannel ch = accepting();
        // One read: the frames after the bad one were sent before the peer read our GOAWAY, and arrive before the
        // connection is gone. None may reach a stream, and none may leak.
        ch.writeInbound(request(1, false), new WmpData(5, false, body("never opened")),
                new WmpData(1, true, body("after")), request(7, true));

        assertThat(received).isEmpty();
        assertThat(accepted).hasSize(1);
    }

    @Test
    void aRequestToTheSideThatDialledIsAConnectionErrorNamingNoStream() {
        EmbeddedChannel ch = new EmbeddedChannel(new MeshSession(null, "peer", rejected));
        channels.add(ch);
        ch.writeInbound(request(1, true));

        assertProtocolError(ch, 0);
        assertThat(rejected.count(Reason.STREAM_ID)).isEqualTo(1);
    }

    @Test
    void onTheDiallingSideAnAnswerToAStreamNeverOpenedIsAConnectionErrorAndALateOneIsNot() {
        MeshSession dialling = new MeshSession(null, "peer", rejected);
        EmbeddedChannel ch = new EmbeddedChannel(dialling);
        channels.add(ch);
        MeshStream s = dialling.openStream(); // stream 1
        s.cancel(WmpError.CANCELLED);
        ch.writeInbound(new WmpResponse(1, true, 200, new WmpHeaders(), body("late answer")));
        assertThat(ch.isOpen()).as("an answer that crossed our CANCEL").isTrue();

        ch.writeInbound(new WmpResponse(3, true, 200, new WmpHeaders(), body("answer to nothing")));

        assertProtocolError(ch, 0);
        assertThat(rejected.count(Reason.UNOPENED_STREAM)).isEqualTo(1);
    }

    @Test
    void whileDrainingANewStreamIsRefusedAndItsDataIsLateNotAnError() {
        MeshSession.Acceptor never = (stream, request) -> {
            throw new AssertionError("no stream is accepted while draining");
        };
        MeshSession session = new MeshSession(never, "peer", rejected);
        EmbeddedChannel ch = new EmbeddedChannel(session);
        channels.add(ch);
        session.goAway("restarting");
        assertThat((Object) ch.readOutbound()).isInstanceOf(WmpGoAway.class);

        ch.writeInbound(request(1, false));
        ch.writeInbound(new WmpData(1, true, body("rest of a refused request")));

        WmpCancel refused = ch.readOutbound();
        assertThat(refused.streamId()).isEqualTo(1);
        assertThat(refused.error()).isEqualTo(WmpError.REFUSED_STREAM);
        assertThat(ch.isOpen()).isTrue();
    }
}
