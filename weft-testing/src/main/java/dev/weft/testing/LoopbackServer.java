package dev.weft.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A plain-socket server on a loopback port the OS picks, for test servers that must write bytes no library would (a
 * misbehaving app, a misbehaving peer sidecar): each accepted connection is given to the handler on a virtual thread
 * of its own. Closing it stops accepting and closes every connection still open, so no test leaves one behind.
 *
 * <p>Thread: one virtual thread accepts, one runs the handler per connection; the handler owns its socket (closing it
 * when done is the handler's; {@link #close} closes what is left).
 */
public final class LoopbackServer implements AutoCloseable {
    private final ServerSocket server;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Consumer<Socket> handler;

    /** @param name names the threads, for thread dumps */
    public LoopbackServer(String name, Consumer<Socket> handler) throws IOException {
        this.handler = handler;
        server = new ServerSocket(0, 512, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name(name + "-accept").start(() -> accept(name));
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    private void accept(String name) {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                open.add(s);
                Thread.ofVirtual().name(name + "-conn").start(() -> {
                    try {
                        handler.accept(s);
                    } finally {
                        open.remove(s);
                    }
                });
            } catch (IOException closed) {
                return;
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : open) {
            s.close();
        }
    }
}
