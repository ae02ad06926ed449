package dev.weft.dataplane.security;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslHandler;

/**
 * Stands after the {@link SslHandler} of an accepted mesh connection until its handshake ends: then checks the ALPN
 * protocol and reads the peer's verified identity ({@link MeshTls#verified}), and hands the pipeline to the
 * protocol inside, or closes the connection (counted and logged by {@link MeshTls}).
 *
 * <p>Why Netty's {@link ApplicationProtocolNegotiationHandler}: it holds back any bytes decrypted before the
 * handshake-completed event, so the first WMP frame cannot reach a pipeline that is not built yet.
 *
 * <p>Thread: the connection's Worker loop. Buffers: none of its own; held-back messages are passed on by the parent.
 */
public final class InboundTlsGate extends ApplicationProtocolNegotiationHandler {
    /** Builds the pipeline of the protocol inside once the peer is known. */
    public interface Inside {
        void install(ChannelPipeline p, PeerIdentity peer);
    }

    private final MeshTls tls;
    private final String peer;
    private final Inside inside;

    public InboundTlsGate(MeshTls tls, String peer, Inside inside) {
        super("none"); // what Netty reports when the peer offered no ALPN: refused in configurePipeline
        this.tls = tls;
        this.peer = peer;
        this.inside = inside;
    }

    @Override
    protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
        PeerIdentity identity = tls.verified(ctx.pipeline().get(SslHandler.class), true, peer);
        if (identity == null) {
            ctx.close();
            return;
        }
        inside.install(ctx.pipeline(), identity);
    }

    @Override
    protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // MeshTls counted the failure when the handshake future failed
    }
}
