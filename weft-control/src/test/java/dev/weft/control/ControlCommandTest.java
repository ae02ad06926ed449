package dev.weft.control;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ControlCommandTest {
    private final ControlCommand.HostPortConverter converter = new ControlCommand.HostPortConverter();

    @Test
    void listen_takes_host_and_port_including_bracketed_ipv6() {
        assertThat(converter.convert("127.0.0.1:7700")).isEqualTo(new InetSocketAddress("127.0.0.1", 7700));
        assertThat(converter.convert("[::1]:0")).isEqualTo(new InetSocketAddress("::1", 0));
        assertThat(ControlCommand.format(new InetSocketAddress("::1", 7700))).isEqualTo("[0:0:0:0:0:0:0:1]:7700");
    }

    @Test
    void a_malformed_listen_address_is_refused_with_the_expected_form() {
        assertThatThrownBy(() -> converter.convert("7700")).hasMessageContaining("expected HOST:PORT");
        assertThatThrownBy(() -> converter.convert("localhost:http")).hasMessageContaining("expected 0-65535");

        StringWriter err = new StringWriter();
        int exit = new CommandLine(new ControlCommand()).setErr(new PrintWriter(err)).execute("--listen", "nope");

        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--listen'").contains("expected HOST:PORT");
    }

    @Test
    void defaults_match_the_documentation() {
        ControlCommand command = new ControlCommand();
        new CommandLine(command).parseArgs();

        assertThat(command.listen).isEqualTo(new InetSocketAddress("127.0.0.1", 7700));
        assertThat(command.dataDir.toString()).isEqualTo("./.weft/control");
    }

    @Test
    void a_registry_of_no_known_scheme_is_refused_naming_the_alternatives() {
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new ControlCommand()).setErr(new PrintWriter(err))
                .execute("--listen", "127.0.0.1:0", "--registry", "zookeeper://127.0.0.1:2181");

        assertThat(exit).isEqualTo(2);
        // No backend module on this module's class path; ./weft has weft-registry-etcd, which adds etcd://.
        assertThat(err.toString()).contains("invalid --registry: unsupported control plane registry"
                + " 'zookeeper://127.0.0.1:2181'").contains("leave --registry out for the embedded store");
    }
}
