package dev.weft.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A loopback port held, until {@link #close}, by a socket bound to it that never listens. While it is held:
 * <ul>
 *   <li>a dial to it is refused, unless a listener was put on it (Linux answers a SYN with a reset when nothing
 *   listens);</li>
 *   <li>no other socket can be given it: a bind to port 0 and the local port of an outgoing connection skip a port a
 *   socket is bound to, in every process;</li>
 *   <li>a listener that allows address reuse can still bind it, by its number: Linux lets a socket with SO_REUSEADDR
 *   bind beside others that have it too, as long as none of them listens. Netty's server channels (epoll and NIO),
 *   the JDK's server sockets and Go's listeners (etcd) all set it, so a process told this port binds it while it is
 *   held, and nothing else can take it before, or between a kill and a restart.</li>
 * </ul>
 * What it replaces: a port picked (bound to port 0) and closed at once, free again until whoever was told it binds it.
 * Any bind to port 0 meanwhile (a sidecar's listener, a child's) could be handed it, and any outgoing connection could
 * get it as its local port; a test that wanted "nothing listens there" then got an answer.
 */
public final class HeldPort implements AutoCloseable {
    private final Socket holder;

    HeldPort() throws IOException {
        holder = new Socket();
        try {
            holder.setReuseAddress(true);
            holder.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        } catch (IOException e) {
            holder.close();
            throw e;
        }
    }

    public int port() {
        return holder.getLocalPort();
    }

    /**
     * A listener on this port (JDK server sockets allow address reuse); once it is closed, dials are refused again,
     * with no moment at which another socket could take the port.
     */
    public ServerSocket listen() throws IOException {
        ServerSocket s = new ServerSocket();
        try {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port()), 50);
            return s;
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }

    /** Frees the port; a listener bound to it meanwhile keeps listening. */
    @Override
    public void close() throws IOException {
        holder.close();
    }
}
