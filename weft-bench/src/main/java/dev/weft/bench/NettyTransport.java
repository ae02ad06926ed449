package dev.weft.bench;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * Picks native epoll when it loads and NIO otherwise, so the generator costs as little CPU as it can on Linux
 * and still runs elsewhere. The event loop and the channel class must come from the same transport. (weft-examples
 * has the same helper; the generator keeps its own so it does not depend on the apps it measures.)
 */
final class NettyTransport {
    private static final boolean EPOLL = Epoll.isAvailable();

    private NettyTransport() {}

    static EventLoopGroup newGroup(int threads, String name) {
        IoHandlerFactory io = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), io);
    }

    static Class<? extends SocketChannel> channelClass() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    static String name() {
        return EPOLL ? "epoll" : "nio";
    }
}
