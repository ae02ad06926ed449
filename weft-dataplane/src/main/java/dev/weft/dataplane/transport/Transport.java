package dev.weft.dataplane.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.OptionalInt;

/**
 * The paper's Manager and Workers. The Manager is a one-thread event loop that only accepts connections; each
 * accepted connection is registered with one Worker (an event loop) and stays there for life, so all of its
 * state is touched by one thread and needs no locks. Native epoll is used when it loads (it does on Linux x86_64),
 * NIO otherwise.
 */
public final class Transport implements AutoCloseable {
    /** The most Workers a sidecar starts unless told otherwise ({@code --workers}); see {@link #defaultWorkers()}. */
    public static final int MAX_DEFAULT_WORKERS = 2;

    private final boolean epoll;
    private final EventLoopGroup manager;
    private final EventLoopGroup workers;

    public Transport(int workerThreads) {
        this.epoll = Epoll.isAvailable();
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.manager = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("weft-manager", true), factory);
        this.workers = new MultiThreadIoEventLoopGroup(workerThreads, new DefaultThreadFactory("weft-worker", true), factory);
    }

    /**
     * The number of Workers when none is given: {@code min(2, the CPUs this process may use)}, where the CPUs it
     * may use are its cgroup's CPU quota rounded up ({@link CgroupCpuLimit}), never more than
     * {@code Runtime.availableProcessors()}, or that alone without a quota.
     *
     * <p>Why not one per CPU: several sidecars share a machine, with their apps. Event loops beyond a sidecar's
     * share of the CPUs add no capacity, only wake-ups, hand-offs between threads and cache misses. Issue 12
     * measured four sidecars on 2 cores: 2 Workers each instead of 1 cost 22% more CPU per request with
     * observability off (138.6 against 114.0 µs) and 55% more with it on (216.6 against 139.8), "about 30%" in the
     * issue's words. So the default is capped like Istio's sidecars (2, enough to use a second core) and follows the
     * CPU limit like Linkerd's (a sidecar confined to one CPU runs one Worker).
     */
    public static int defaultWorkers() {
        return defaultWorkers(CgroupCpuLimit.ofThisProcess(), Runtime.getRuntime().availableProcessors());
    }

    /** {@link #defaultWorkers()} for a given quota (in whole CPUs, empty for none) and available processors. */
    static int defaultWorkers(OptionalInt quotaCpus, int availableProcessors) {
        int cpus = quotaCpus.isPresent() ? Math.min(quotaCpus.getAsInt(), availableProcessors) : availableProcessors;
        return Math.max(1, Math.min(MAX_DEFAULT_WORKERS, cpus));
    }

    public boolean isEpoll() {
        return epoll;
    }

    public EventLoopGroup manager() {
        return manager;
    }

    public EventLoopGroup workers() {
        return workers;
    }

    public Class<? extends ServerChannel> serverChannelClass() {
        return epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public Class<? extends SocketChannel> channelClass() {
        return epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    public String name() {
        return epoll ? "epoll" : "nio";
    }

    @Override
    public void close() {
        manager.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS);
        manager.terminationFuture().syncUninterruptibly();
        workers.terminationFuture().syncUninterruptibly();
    }
}
