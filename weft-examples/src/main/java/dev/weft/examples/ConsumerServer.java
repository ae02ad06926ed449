package dev.weft.examples;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.EventExecutor;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The paper's Consumer: takes {@code POST /} with data, asks the provider (through its sidecar's local port) for
 * {@code hashCode(data)} and answers with the provider's status and body; {@code 502} when the provider cannot be
 * reached. It is deliberately a plain app: all routing, balancing and back-pressure handling is the mesh's job.
 *
 * <p>Each event loop has its own {@link ProviderPool}, and an incoming connection uses the pool of its own loop,
 * so a request and its provider call never change threads.
 */
public final class ConsumerServer implements AutoCloseable {
    /**
     * @param listen                  where to bind; port 0 picks a free one
     * @param providerUrl             {@code http://HOST:PORT}, normally the consumer sidecar's port for the provider
     * @param maxProviderConnections  open connections to the provider, across all event loops
     * @param providerTimeout         how long to wait for the provider's answer before replying 504
     * @param ioThreads               event loops
     */
    public record Settings(HostPort listen, URI providerUrl, int maxProviderConnections, Duration providerTimeout,
                           int ioThreads) {
        public Settings {
            Objects.requireNonNull(listen, "listen");
            ProviderTarget.parse(providerUrl);
            if (maxProviderConnections < 1) {
                throw new IllegalArgumentException("max-provider-connections must be at least 1 (got "
                        + maxProviderConnections + ")");
            }
            if (providerTimeout == null || providerTimeout.isNegative() || providerTimeout.isZero()) {
                throw new IllegalArgumentException("provider timeout must be positive (got " + providerTimeout + ")");
            }
            if (ioThreads < 1) {
                throw new IllegalArgumentException("io-threads must be at least 1 (got " + ioThreads + ")");
            }
        }

        public static Settings of(HostPort listen, URI providerUrl) {
            return new Settings(listen, providerUrl, 2048, Duration.ofSeconds(10),
                    Runtime.getRuntime().availableProcessors());
        }
    }

    private final Settings settings;
    /**
     * Accepts connections, and nothing else. Sharing a loop with the connections' IO, accepting is capped at 16
     * connections per loop turn, and on a saturated machine a turn over a thousand busy connections takes tens of
     * milliseconds: a burst of 1,024 new clients then waited seconds to be accepted while their requests, already
     * sent, counted down the clients' timeouts (docs/resilience.md, burst).
     */
    private final EventLoopGroup acceptor;
    private final EventLoopGroup group;
    private final Map<EventLoop, ProviderPool> pools;
    private final Channel serverChannel;
    /** Injected faults (only {@code error-rate} applies to a consumer); off by default. */
    private final Faults faults = new Faults();

    private ConsumerServer(Settings settings) throws InterruptedException {
        this.settings = settings;
        this.acceptor = NettyTransport.newGroup(1, "consumer-accept");
        this.group = NettyTransport.newGroup(settings.ioThreads(), "consumer");
        try {
            ProviderTarget target = ProviderTarget.parse(settings.providerUrl());
            int perLoop = Math.max(1, settings.maxProviderConnections() / settings.ioThreads());
            Map<EventLoop, ProviderPool> byLoop = new IdentityHashMap<>();
            for (EventExecutor executor : group) {
                EventLoop loop = (EventLoop) executor;
                byLoop.put(loop, new ProviderPool(loop, target, perLoop, settings.providerTimeout()));
            }
            this.pools = byLoop;
            ServerBootstrap bootstrap = new ServerBootstrap()
                    .group(acceptor, group)
                    .channel(NettyTransport.serverChannelClass())
                    .option(ChannelOption.SO_BACKLOG, 4096)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast("http", new HttpServerCodec())
                                    .addLast("aggregator", new HttpObjectAggregator(ProviderServer.MAX_BODY_BYTES))
                                    .addLast("consumer", new ConsumerHandler(pools.get(ch.eventLoop()), faults));
                        }
                    });
            this.serverChannel = bootstrap.bind(settings.listen().toSocketAddress()).sync().channel();
        } catch (InterruptedException | RuntimeException e) {
            acceptor.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw e;
        }
    }

    /** Binds and starts serving; throws (with the OS's reason) when the address cannot be bound. */
    public static ConsumerServer start(Settings settings) throws InterruptedException {
        return new ConsumerServer(settings);
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    public Settings settings() {
        return settings;
    }

    /** Injected faults: a share of requests answered 500 by the consumer itself (see {@link Faults}). */
    public Faults faults() {
        return faults;
    }

    public void awaitClose() throws InterruptedException {
        serverChannel.closeFuture().await();
    }

    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
