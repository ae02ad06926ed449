package dev.weft.dataplane.observe;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RouteTableTest {

    @Test
    void theFirstMatchingRouteNamesTheRequestAndEverythingElseIsDefault() {
        RouteTable t = new RouteTable(List.of(RouteTable.Route.parse("create=POST:/users"),
                RouteTable.Route.parse("users=/users"), RouteTable.Route.parse("Health=/health")));
        assertThat(t.match("POST", "/users/7")).isEqualTo("create");
        assertThat(t.match("GET", "/users/7")).isEqualTo("users");
        assertThat(t.match("GET", "/health")).isEqualTo("health");
        assertThat(t.match("GET", "/orders/1?x=2")).isEqualTo(RouteTable.DEFAULT);
        assertThat(t.names()).containsExactly("create", "users", "health", "default");
    }

    @Test
    void badRoutesAreRefusedWithTheExpectedForm() {
        assertThatThrownBy(() -> RouteTable.Route.parse("users")).hasMessageContaining("expected NAME=[METHOD:]PATH_PREFIX");
        assertThatThrownBy(() -> RouteTable.Route.parse("users=users")).hasMessageContaining("starting with /");
        assertThatThrownBy(() -> RouteTable.Route.parse("default=/x")).hasMessageContaining("reserved");
        assertThatThrownBy(() -> RouteTable.Route.parse("a b=/x")).hasMessageContaining("invalid route name 'a b'");
        assertThatThrownBy(() -> RouteTable.Route.parse("x=G3T:/x")).hasMessageContaining("invalid method");
    }
}
