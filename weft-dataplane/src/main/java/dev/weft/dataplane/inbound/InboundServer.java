package dev.weft.dataplane.inbound;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.http.Http1RequestDecoder;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.transport.ConnectionTimeouts;
import dev.weft.dataplane.downstream.Http1Downstream;
import dev.weft.dataplane.downstream.WmpDownstream;
import dev.weft.dataplane.exchange.PolicyStack;
import dev.weft.dataplane.security.InboundTlsGate;
import dev.weft.dataplane.security.MeshTls;
import dev.weft.dataplane.security.PeerIdentity;
import dev.weft.dataplane.security.TlsRefusal;
import dev.weft.dataplane.transport.StallTimer;
import dev.weft.dataplane.transport.Transport;
import dev.weft.dataplane.upstream.Upstream;
import dev.weft.protocol.WmpCodec;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpLimits;
import dev.weft.protocol.WmpWire;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The inbound listener: accepts connections from peer sidecars (the Manager accepts, a Worker owns each connection)
 * and carries their requests to the local app. It speaks both mesh link protocols on one port and tells them apart by
 * the first byte: WMP frames start with the magic 0x57 ('W'), which no HTTP method starts with. Both carry their
 * requests as exchanges on one {@link PolicyStack} (the inbound one, to the app): a WMP stream through a
 * {@link WmpDownstream}, an HTTP/1.1 connection ({@code --mesh-protocol http1} peers) through an
 * {@link Http1Downstream}, the same one the outbound listeners use. A TLS ClientHello (first byte 0x16, a handshake
 * record) gets the mesh's mTLS from {@link MeshTls} and WMP inside once the handshake names {@value MeshTls#ALPN};
 * with {@code --mtls strict} plaintext of either kind is refused (counted in {@code weft_tls_refused_total}).
 */
public final class InboundServer implements AutoCloseable {
    private final Transport transport;
    private final PolicyStack stack;
    private final SidecarMetrics metrics;
    private final WmpLimits limits;
    private final WmpCodecMetrics codecMetrics;
    private final ConnectionTimeouts timeouts;
    private final MeshTls tls;
    private final ChannelGroup connections = new DefaultChannelGroup("weft-inbound", GlobalEventExecutor.INSTANCE);
    private Channel listener;

    /**
     * @param timeouts of each connection until its first byte (idle), then of each from an HTTP/1.1 peer (a WMP
     *                 connection has its heartbeat instead)
     */
    public InboundServer(Transport transport, Cluster app, Upstream appUpstream, Collaborator collaborator,
                         SidecarMetrics metrics, WmpLimits limits, WmpCodecMetrics codecMetrics,
                         ExchangeObserver observer, String localService, ConnectionTimeouts timeouts, MeshTls tls) {
        this.timeouts = timeouts;
        this.tls = tls;
        this.transport = transport;
        this.stack = PolicyStack.inbound(app, appUpstream, collaborator, metrics, observer, localService);
        this.metrics = metrics;
        this.limits = limits;
        this.codecMetrics = codecMetrics;
    }

    public InetSocketAddress bind(InetSocketAddress address) throws InterruptedException {
        listener = new ServerBootstrap()
                .group(transport.manager(), transport.workers())
                .channel(transport.serverChannelClass())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        metrics.meshConnectionsAccepted.increment();
                        connections.add(ch);
                        // For the HTTP/1.1 branch, which keeps it: a connection's answers written during one
                        // read go out in one flush, and so do those written outside a read. The WMP branches put
                        // their session's own setting in its place (installWmp, installTls).
                        ch.pipeline().addLast("flush", new FlushConsolidationHandler(64, true));
                        ch.pipeline().addLast("detect", new ProtocolDetector());
                    }
                })
                .bind(address).sync().channel();
        return (InetSocketAddress) listener.localAddress();
    }

    /** Plaintext WMP: the flush consolidation the connection started with becomes the session's. */
    private void installPlaintextWmp(ChannelPipeline p) {
        p.replace("flush", "flush", MeshSession.flushConsolidation());
        installWmp(p, null);
    }

    /**
     * The WMP handlers, above the session's flush consolidation (put there by {@link #installPlaintextWmp} or
     * {@link #installTls}).
     *
     * @param caller the peer's verified identity on an mTLS connection, null on a plaintext one
     */
    private void installWmp(ChannelPipeline p, PeerIdentity caller) {
        Channel ch = p.channel();
        String peer = String.valueOf(ch.remoteAddress()); // once per connection, not per request
        WmpCodec.install(p, limits, codecMetrics);
        p.addLast("idle", MeshSession.heartbeat());
        p.addLast("session", new MeshSession(WmpDownstream.acceptor(stack, ch.eventLoop(), peer, caller), peer,
                metrics.rejected));
    }

    /**
     * TLS first, WMP inside after the handshake. The flush consolidation moves above TLS, so that the WMP frames of
     * one read are encrypted into few records instead of one record per frame; it is the session's from the start,
     * because TLS here carries nothing but WMP (the gate refuses any other ALPN).
     */
    private void installTls(ChannelPipeline p, SslHandler ssl) {
        p.remove("flush");
        p.addLast("tls", ssl);
        p.addLast("flush", MeshSession.flushConsolidation());
        p.addLast("tls-gate", new InboundTlsGate(tls, String.valueOf(p.channel().remoteAddress()), this::installWmp));
    }

    /** Closes a connection this listener will not serve; what was read is dropped (the cumulation is ours). */
    private void refuse(ChannelHandlerContext ctx, ByteBuf in, TlsRefusal reason, String detail) {
        in.skipBytes(in.readableBytes());
        tls.refused(true, reason, "peer " + ctx.channel().remoteAddress() + " " + detail);
        ctx.close();
    }

    private void installHttp(ChannelPipeline p) {
        p.addLast("http-decoder", new Http1RequestDecoder(timeouts.requestHead()));
        p.addLast("downstream", new Http1Downstream(stack, false, timeouts));
    }

    /**
     * Reads the first byte, installs the matching protocol's handlers (TLS, WMP, HTTP/1.1), and hands them
     * everything read so far, or refuses the connection (strict mode, TLS without a certificate). A
     * connection that sends no byte at all is idle like any other: closed after the idle timeout, and counted.
     * Thread: the connection's Worker. Buffers: the cumulation is passed on by ByteToMessageDecoder on removal.
     */
    private final class ProtocolDetector extends ByteToMessageDecoder {
        /** A TLS record of type handshake: what every ClientHello starts with (RFC 8446, 5.1). */
        private static final int TLS_HANDSHAKE_RECORD = 0x16;
        private final StallTimer.Watch firstByte = new StallTimer.Watch(this::idle);
        private Channel channel;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            firstByte.time(channel, timeouts.idle().toNanos());
        }

        @Override
        protected void handlerRemoved0(ChannelHandlerContext ctx) {
            firstByte.time(channel, 0); // the protocol's own handlers time the connection from here on
        }

        private void idle() {
            metrics.idleConnectionsClosed.increment();
            channel.close();
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (!in.isReadable()) {
                return;
            }
            ChannelPipeline p = ctx.pipeline();
            int first = in.getUnsignedByte(in.readerIndex());
            if (first == TLS_HANDSHAKE_RECORD) {
                SslHandler ssl = tls.serverHandler(ctx.alloc());
                if (ssl == null) {
                    refuse(ctx, in, TlsRefusal.NO_LOCAL_CERTIFICATE, "sent a TLS ClientHello, but this sidecar holds"
                            + " no certificate (--mtls " + tls.mode().label() + ", no --token-file or none issued yet)");
                    return;
                }
                installTls(p, ssl);
            } else if (!tls.plaintextAccepted()) {
                refuse(ctx, in, TlsRefusal.PLAINTEXT, "sent plaintext " + (first == WmpWire.MAGIC ? "WMP" : "HTTP/1.1")
                        + "; --mtls strict takes only mTLS on the inbound port");
                return;
            } else if (first == WmpWire.MAGIC) {
                installPlaintextWmp(p);
            } else {
                installHttp(p);
            }
            p.remove(this);
        }
    }

    /** Stops accepting and asks every WMP peer to stop opening streams here (GOAWAY); streams in flight finish. */
    public void drain(String reason) {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        for (Channel ch : connections) {
            ch.eventLoop().execute(() -> {
                MeshSession s = ch.pipeline().get(MeshSession.class);
                if (s != null) {
                    s.goAway(reason);
                }
            });
        }
    }

    public int openConnections() {
        return connections.size();
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        connections.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
    }
}
