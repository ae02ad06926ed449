package dev.weft.dataplane.inbound;

import dev.weft.dataplane.balancing.Cluster;
import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.mesh.MeshSession;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.transport.Transport;
import dev.weft.protocol.WmpCodec;
import dev.weft.protocol.WmpCodecMetrics;
import dev.weft.protocol.WmpLimits;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The inbound listener: accepts WMP connections from peer sidecars (the Manager accepts, a Worker owns each
 * connection) and turns every stream into an {@link InboundExchange} to the local app.
 */
public final class InboundServer implements AutoCloseable {
    private final Transport transport;
    private final Cluster app;
    private final AppPool appPool;
    private final Collaborator collaborator;
    private final SidecarMetrics metrics;
    private final WmpLimits limits;
    private final WmpCodecMetrics codecMetrics;
    private final ChannelGroup connections = new DefaultChannelGroup("weft-inbound", GlobalEventExecutor.INSTANCE);
    private Channel listener;

    public InboundServer(Transport transport, Cluster app, AppPool appPool, Collaborator collaborator,
                         SidecarMetrics metrics, WmpLimits limits, WmpCodecMetrics codecMetrics) {
        this.transport = transport;
        this.app = app;
        this.appPool = appPool;
        this.collaborator = collaborator;
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
                        String peer = String.valueOf(ch.remoteAddress());
                        ch.pipeline().addLast("flush", new FlushConsolidationHandler(64, true));
                        WmpCodec.install(ch.pipeline(), limits, codecMetrics);
                        ch.pipeline().addLast("idle", new IdleStateHandler(30, 10, 0, TimeUnit.SECONDS));
                        ch.pipeline().addLast("session", new MeshSession((stream, request) -> {
                            InboundExchange ex = new InboundExchange(stream, request, ch.eventLoop(), app, appPool, metrics);
                            collaborator.carry(ex);
                            return ex;
                        }, peer));
                    }
                })
                .bind(address).sync().channel();
        return (InetSocketAddress) listener.localAddress();
    }

    /** Stops accepting and asks every peer to stop opening streams here (GOAWAY); streams in flight finish. */
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
