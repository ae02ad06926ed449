package dev.weft.dataplane.outbound;

import dev.weft.dataplane.collab.Collaborator;
import dev.weft.dataplane.http.Http1RequestDecoder;
import dev.weft.dataplane.metrics.SidecarMetrics;
import dev.weft.dataplane.observe.ExchangeObserver;
import dev.weft.dataplane.transport.ConnectionTimeouts;
import dev.weft.dataplane.downstream.Http1Downstream;
import dev.weft.dataplane.exchange.PolicyStack;
import dev.weft.dataplane.transport.Transport;
import dev.weft.dataplane.upstream.Upstream;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The outbound listeners, where the local app sends its calls: one per {@code --upstream NAME=HOST:PORT} (bound to
 * that service) and optionally the shared {@code --outbound} one (destination from the Host header).
 * Pipeline per app connection: Weft's strict HTTP/1.1 request decoder ({@link Http1RequestDecoder}) →
 * {@link Http1Downstream}, whose exchanges run on the listener's outbound {@link PolicyStack} toward the mesh link's
 * {@link Upstream} (WMP by default).
 *
 * <p>Thread: {@link #bind}, {@link #stopAccepting} and {@link #close} run on the caller's thread (start and drain);
 * the Manager accepts, and each app connection's pipeline runs on the Worker loop that owns it. Buffers: none held
 * here; the pipeline's handlers say who releases what they read.
 */
public final class OutboundServer implements AutoCloseable {
    private final Transport transport;
    private final Router router;
    private final Upstream meshUpstream;
    private final Collaborator collaborator;
    private final SidecarMetrics metrics;
    private final ExchangeObserver observer;
    private final String localService;
    private final ConnectionTimeouts timeouts;
    private final List<Channel> listeners = new ArrayList<>();
    private final ChannelGroup connections = new DefaultChannelGroup("weft-outbound", GlobalEventExecutor.INSTANCE);

    /** @param timeouts of each app connection: its request heads, the waits between requests, request bodies */
    public OutboundServer(Transport transport, Router router, Upstream meshUpstream, Collaborator collaborator,
                          SidecarMetrics metrics, ExchangeObserver observer, String localService,
                          ConnectionTimeouts timeouts) {
        this.timeouts = timeouts;
        this.observer = observer;
        this.localService = localService;
        this.transport = transport;
        this.router = router;
        this.meshUpstream = meshUpstream;
        this.collaborator = collaborator;
        this.metrics = metrics;
    }

    /** @param service the service this listener forwards to, or null to route by Host header */
    public InetSocketAddress bind(InetSocketAddress address, String service) throws InterruptedException {
        Destination destination;
        if (service != null) {
            router.pin(service); // watch it now, so the first call does not wait for discovery
            destination = Destination.bound(router, service);
        } else {
            destination = Destination.byHost(router);
        }
        PolicyStack stack = PolicyStack.outbound(destination, meshUpstream, collaborator, metrics, observer, localService);
        Channel ch = new ServerBootstrap()
                .group(transport.manager(), transport.workers())
                .channel(transport.serverChannelClass())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel c) {
                        metrics.downstreamConnections.increment();
                        connections.add(c);
                        // Flushes made while this connection reads (error answers) wait for the end of the read.
                        // An answer is written while the mesh connection reads, and an app connection carries one
                        // answer at a time: flushing it at once costs the same one write as deferring it, without a
                        // task per answer (the WMP connections, which carry many, do defer: MeshPool, InboundServer).
                        c.pipeline().addLast("flush", new FlushConsolidationHandler(64, false));
                        c.pipeline().addLast("http-decoder", new Http1RequestDecoder(timeouts.requestHead()));
                        c.pipeline().addLast("downstream", new Http1Downstream(stack, true, timeouts));
                    }
                })
                .bind(address).sync().channel();
        listeners.add(ch);
        return (InetSocketAddress) ch.localAddress();
    }

    /** Stops accepting new app connections; connections already open keep working until closed. */
    public void stopAccepting() {
        for (Channel l : listeners) {
            l.close().syncUninterruptibly();
        }
    }

    public int openConnections() {
        return connections.size();
    }

    @Override
    public void close() {
        stopAccepting();
        connections.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
    }
}
