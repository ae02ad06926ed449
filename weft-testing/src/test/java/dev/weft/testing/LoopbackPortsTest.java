package dev.weft.testing;

import org.junit.jupiter.api.Test;

import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LoopbackPortsTest {
    private static void dial(int port) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
        }
    }

    @Test
    void distinctPortsAreAllDifferent() throws Exception {
        assertThat(LoopbackPorts.distinct(20)).hasSize(20).doesNotHaveDuplicates().doesNotContain(0);
    }

    @Test
    void aHeldPortRefusesEveryDialAndASocketWithoutAddressReuseCannotBindIt() throws Exception {
        try (HeldPort held = LoopbackPorts.held()) {
            assertThatThrownBy(() -> dial(held.port())).isInstanceOf(ConnectException.class);
            try (Socket other = new Socket()) {
                assertThatThrownBy(() -> other.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                        held.port()))).isInstanceOf(BindException.class);
            }
        }
    }

    @Test
    void aListenerOnAHeldPortAcceptsUntilClosedThenDialsAreRefusedAgain() throws Exception {
        try (HeldPort held = LoopbackPorts.held()) {
            try (ServerSocket listener = held.listen()) {
                assertThat(listener.getLocalPort()).isEqualTo(held.port());
                dial(held.port());
            }
            assertThatThrownBy(() -> dial(held.port())).isInstanceOf(ConnectException.class);
        }
    }

    @Test
    void noBindToPortZeroIsGivenAHeldPort() throws Exception {
        try (HeldPort held = LoopbackPorts.held()) {
            for (int i = 0; i < 200; i++) {
                try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                    assertThat(s.getLocalPort()).isNotEqualTo(held.port());
                }
            }
        }
    }
}
