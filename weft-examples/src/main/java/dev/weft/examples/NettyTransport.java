package dev.weft.examples;

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
 * Picks native epoll when it loads and NIO otherwise, so the example apps run anywhere but measure like the
 * mesh does on Linux. The event loop and the channel classes must come from the same transport.
 */
public final class NettyTransport {
    private static final boolean EPOLL = Epoll.isAvailable();

    private NettyTransport() {}

    /** A group of {@code threads} event loops whose threads are named {@code name-N} (they show up in thread dumps). */
    public static EventLoopGroup newGroup(int threads, String name) {
        IoHandlerFactory io = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), io);
    }

    public static Class<? extends ServerChannel> serverChannelClass() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends SocketChannel> channelClass() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    public static String name() {
        return EPOLL ? "epoll" : "nio";
    }
}
