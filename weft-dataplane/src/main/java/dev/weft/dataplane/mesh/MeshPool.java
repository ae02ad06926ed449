package dev.weft.dataplane.mesh;

import dev.weft.dataplane.metrics.Rejections;
import dev.weft.dataplane.security.MeshTls;
import dev.weft.dataplane.transport.Transport;
import dev.weft.protocol.WmpCodec;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpLimits;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Persistent, multiplexed WMP connections to peer sidecars: per Worker loop, {@code connectionsPerPeer} connections
 * to each peer, registered on that same loop (as Netty's proxy example pins the backend channel to the frontend's
 * loop). A request therefore never changes thread, and there is no TCP handshake per request: a connection is
 * dialled once and kept until it fails or the peer drains it. A peer that breaks the stream rules on one of these
 * connections loses it as it would on the accepting side (GOAWAY {@code PROTOCOL_ERROR}, {@link MeshSession}), and is
 * counted in the same {@code weft_rejected_total{boundary="wmp_connection"}}.
 *
 * <p>With a certificate ({@link MeshTls#active()}) every connection is dialled with mTLS: one TLS 1.3 handshake per
 * pooled connection, never per request, and the connection is handed out only once the handshake is done and the
 * peer agreed on {@value MeshTls#ALPN}. A handshake that fails is a failed dial: nothing was sent, so the request may
 * go to another endpoint. A plaintext connection dialled before the certificate arrived (permissive mode) is
 * replaced by an mTLS one at its next use, and closes once its streams are done.
 *
 * <p>Threads: {@link #session} must be called on the Worker loop it is given; each loop's table is confined to it.
 */
public final class MeshPool implements AutoCloseable {
    private final Transport transport;
    private final WmpLimits limits;
    private final WmpCodecMetrics codecMetrics;
    private final int connectionsPerPeer;
    private final int connectTimeoutMillis;
    private final Rejections rejected;
    private final MeshTls tls;
    private final Map<EventLoop, Map<String, Slot[]>> perLoop = new ConcurrentHashMap<>();
    private final LongAdder opened = new LongAdder();
    private final LongAdder connectFailures = new LongAdder();

    /** The limits of the WMP codec on this sidecar's mesh connections, which its peers apply too. */
    public WmpLimits limits() {
        return limits;
    }

    /**
     * @param rejected where what peers send wrongly on these connections is counted (the sidecar's
     *                 {@code weft_rejected_total}): stream rules here, answers in {@code WmpUpstream}
     * @param tls      decides per connection whether it is dialled with mTLS
     */
    public MeshPool(Transport transport, WmpLimits limits, WmpCodecMetrics codecMetrics, int connectionsPerPeer,
                    int connectTimeoutMillis, Rejections rejected, MeshTls tls) {
        this.tls = tls;
        this.transport = transport;
        this.limits = limits;
        this.codecMetrics = codecMetrics;
        this.connectionsPerPeer = Math.max(1, connectionsPerPeer);
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.rejected = rejected;
    }

    /** Where refusals of what peers send on these connections are counted. */
    public Rejections rejected() {
        return rejected;
    }

    public long opened() {
        return opened.sum();
    }

    public long connectFailures() {
        return connectFailures.sum();
    }

    /** Open connections across all loops (for /metrics). Approximate: read from another thread. */
    public int openConnections() {
        int n = 0;
        for (Map<String, Slot[]> m : perLoop.values()) {
            for (Slot[] slots : m.values()) {
                for (Slot s : slots) {
                    if (s != null && s.session != null && s.session.isUsable()) {
                        n++;
                    }
                }
            }
        }
        return n;
    }

    /**
     * A usable session to {@code host:port} on {@code loop}, dialling one if needed. Call on {@code loop}.
     *
     * @param service the service registered at that address: over mTLS the peer's certificate must name it
     * @param key     {@code host:port}, as the caller already has it
     */
    public Future<MeshSession> session(EventLoop loop, String service, String host, int port, String key) {
        Slot[] slots = perLoop.computeIfAbsent(loop, l -> new HashMap<>())
                .computeIfAbsent(key, k -> new Slot[connectionsPerPeer]);
        // Spread streams: take the usable connection with the fewest streams; dial into an empty slot if any.
        MeshSession best = null;
        int emptySlot = -1;
        for (int i = 0; i < slots.length; i++) {
            Slot s = slots[i];
            if (s != null && s.service != null && !s.service.equals(service)) {
                // The address now belongs to another service (a restart elsewhere took the port): not this peer.
                slots[i] = null;
                s.session.channel().close();
                s = null;
            }
            if (s != null && s.plaintext && s.session.isUsable() && tls.active()) {
                // Permissive: dialled before the certificate arrived. New streams go to an mTLS connection dialled
                // into this slot; this one says GOAWAY (as an initiator that stops using it) and closes once its
                // streams are done.
                s.session.goAway("upgrading to mTLS");
                if (s.session.activeStreams() == 0) {
                    s.session.channel().close();
                }
            }
            if (s == null || (s.session == null && s.pending == null) || (s.session != null && !s.session.isUsable())) {
                if (emptySlot < 0) {
                    emptySlot = i;
                }
                continue;
            }
            if (s.session != null && (best == null || s.session.activeStreams() < best.activeStreams())) {
                best = s.session;
            }
        }
        if (best != null && (emptySlot < 0 || best.activeStreams() == 0)) {
            return loop.newSucceededFuture(best);
        }
        if (emptySlot >= 0) {
            return dial(loop, slots, emptySlot, service, host, port, key);
        }
        // All slots are dialling: wait for the first.
        for (Slot s : slots) {
            if (s.pending != null) {
                return s.pending;
            }
        }
        return loop.newFailedFuture(new IllegalStateException("no mesh connection slot to " + key));
    }

    private Future<MeshSession> dial(EventLoop loop, Slot[] slots, int index, String service, String host, int port,
                                     String key) {
        Slot slot = new Slot();
        slots[index] = slot;
        Promise<MeshSession> promise = loop.newPromise();
        slot.pending = promise;
        MeshSession session = new MeshSession(null, key, rejected);
        SslHandler[] ssl = new SslHandler[1];
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(transport.channelClass())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // TLS nearest the socket, the flush consolidation above it: frames written in one go are
                        // encrypted into few records. Writes made before the handshake ends wait in the SslHandler.
                        ssl[0] = tls.clientHandler(ch.alloc());
                        if (ssl[0] != null) {
                            ch.pipeline().addLast("tls", ssl[0]);
                        }
                        ch.pipeline().addLast("flush", MeshSession.flushConsolidation());
                        WmpCodec.install(ch.pipeline(), limits, codecMetrics);
                        ch.pipeline().addLast("idle", MeshSession.heartbeat());
                        ch.pipeline().addLast("session", session);
                    }
                });
        ChannelFuture cf = b.connect(new InetSocketAddress(host, port));
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                failed(slots, index, promise, key, f.cause());
            } else if (ssl[0] == null) {
                slot.plaintext = true;
                opened(slots, index, slot, session, promise, cf.channel());
            } else {
                ssl[0].handshakeFuture().addListener(h -> {
                    if (!h.isSuccess()) {
                        failed(slots, index, promise, key, h.cause()); // the SslHandler closes the channel
                    } else if ((slot.service = tls.verifiedAs(ssl[0], service, key)) == null) {
                        cf.channel().close();
                        failed(slots, index, promise, key, new javax.net.ssl.SSLHandshakeException("the peer is not"
                                + " service '" + service + "' speaking " + MeshTls.ALPN + " (see weft_tls_refused_total)"));
                    } else {
                        opened(slots, index, slot, session, promise, cf.channel());
                    }
                });
            }
        });
        return promise;
    }

    private void opened(Slot[] slots, int index, Slot slot, MeshSession session, Promise<MeshSession> promise,
                        Channel ch) {
        slot.pending = null;
        opened.increment();
        slot.session = session;
        ch.closeFuture().addListener(c -> {
            if (slots[index] == slot) {
                slots[index] = null;
            }
        });
        promise.setSuccess(session);
    }

    private void failed(Slot[] slots, int index, Promise<MeshSession> promise, String key, Throwable cause) {
        connectFailures.increment();
        if (slots[index] != null) {
            slots[index].pending = null;
        }
        slots[index] = null;
        promise.setFailure(new MeshConnectException("cannot connect to peer sidecar " + key + ": "
                + cause.getMessage(), cause));
    }

    /**
     * Closes every outbound mesh connection, each on its own loop, when the sidecar closes. It sends no GOAWAY: these
     * are connections this sidecar dialled, so no peer opens streams on them; the peers see the connection end.
     */
    public void goAwayAll(String reason) {
        for (Map.Entry<EventLoop, Map<String, Slot[]>> e : perLoop.entrySet()) {
            e.getKey().execute(() -> {
                for (Slot[] slots : e.getValue().values()) {
                    for (Slot s : slots) {
                        if (s != null && s.session != null) {
                            s.session.channel().close();
                        }
                    }
                }
            });
        }
    }

    @Override
    public void close() {
        goAwayAll("closing");
    }

    private static final class Slot {
        MeshSession session;
        /** The service the peer's certificate proved, null on a plaintext connection (nothing proved). */
        String service;
        /** Dialled without TLS (no certificate yet): replaced by an mTLS connection once there is one. */
        boolean plaintext;
        Promise<MeshSession> pending;
    }

    /** Dialling a peer failed: nothing was sent, so the request may go to another endpoint. */
    public static final class MeshConnectException extends Exception {
        public MeshConnectException(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }
}
