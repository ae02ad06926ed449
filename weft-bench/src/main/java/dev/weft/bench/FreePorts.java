package dev.weft.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Loopback ports for the children that cannot report their own (the sidecars are told their ports). The port is
 * free when picked, but another process may take it before the child binds it; the child then fails to start and
 * {@link ChildProcess} names the port in the error. Never hands out the same port twice in one run.
 */
public final class FreePorts {
    private final Set<Integer> handedOut = new HashSet<>();

    public synchronized int pick() {
        for (int attempt = 0; attempt < 50; attempt++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                int port = socket.getLocalPort();
                if (handedOut.add(port)) {
                    return port;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot bind any port on 127.0.0.1 to pick a free one", e);
            }
        }
        throw new IllegalStateException("the OS kept handing out ports already picked in this run");
    }
}
