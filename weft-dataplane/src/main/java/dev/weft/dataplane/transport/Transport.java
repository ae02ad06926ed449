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

/**
 * The paper's Manager and Workers. The Manager is a one-thread event loop that only accepts connections; each
 * accepted connection is registered with one Worker (an event loop) and stays there for life, so all of its
 * state is touched by one thread and needs no locks. Native epoll is used when it loads (it does on Linux x86_64),
 * NIO otherwise.
 */
public final class Transport implements AutoCloseable {
    private final boolean epoll;
    private final EventLoopGroup manager;
    private final EventLoopGroup workers;

    public Transport(int workerThreads) {
        this.epoll = Epoll.isAvailable();
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.manager = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("weft-manager", true), factory);
        this.workers = new MultiThreadIoEventLoopGroup(workerThreads, new DefaultThreadFactory("weft-worker", true), factory);
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
