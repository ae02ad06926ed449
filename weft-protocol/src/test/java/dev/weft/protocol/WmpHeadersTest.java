package dev.weft.protocol;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WmpHeadersTest {

    private static WmpHeaders list(String... pairs) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < pairs.length; i += 2) {
            h.add(pairs[i], pairs[i + 1]);
        }
        return h;
    }

    @Test
    void aVettedFieldStaysVettedUntilReplacedAndItsMarkMovesWithIt() {
        WmpHeaders h = new WmpHeaders().add("a", "1").add("b", "2").add("c", "3").add("b", "4");
        assertThat(h.vetted(0)).isFalse();
        h.markVetted();
        assertThat(vetted(h)).isEqualTo("1111");
        h.add("d", "5");
        assertThat(vetted(h)).as("added after").isEqualTo("11110");
        h.value(0, "x");
        assertThat(vetted(h)).as("replaced in place").isEqualTo("01110");
        h.removeAt(1); // a, c, b, d
        assertThat(vetted(h)).isEqualTo("0110");
        h.insert(1, "e", "6"); // a, e, c, b, d
        assertThat(vetted(h)).isEqualTo("00110");
        h.set("c", "7");
        assertThat(vetted(h)).isEqualTo("00010");
        h.markVetted();
        h.add("b", "8").set("b", "9"); // a, e, c, b(9), d: the first b replaced, the later one dropped
        assertThat(h).isEqualTo(new WmpHeaders().add("a", "x").add("e", "6").add("c", "7").add("b", "9").add("d", "5"));
        assertThat(vetted(h)).isEqualTo("11101");
        h.remove("e");
        assertThat(vetted(h)).isEqualTo("1101");
    }

    @Test
    void onlyTheFirst64FieldsAreEverVetted() {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < 70; i++) {
            h.add("x" + i, "v");
        }
        h.markVetted();
        assertThat(h.vetted(63)).isTrue();
        assertThat(h.vetted(64)).isFalse();
        h.removeAt(0);
        assertThat(h.vetted(62)).isTrue();
        assertThat(h.vetted(63)).as("x64 moved down, never vetted").isFalse();
    }

    @Test
    void aRecycledListVetsNothing() {
        WmpHeaders.Spares spares = new WmpHeaders.Spares(1);
        WmpHeaders h = spares.take(4).add("a", "1");
        h.markVetted();
        h.recycle();
        WmpHeaders again = spares.take(4);
        assertThat(again).isSameAs(h);
        again.add("b", "2");
        assertThat(again.vetted(0)).isFalse();
    }

    private static String vetted(WmpHeaders h) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < h.size(); i++) {
            b.append(h.vetted(i) ? '1' : '0');
        }
        return b.toString();
    }

    @Test
    void insertPutsAFieldAtItsPlaceAndMovesTheRestDown() {
        WmpHeaders h = new WmpHeaders().add("a", "1").add("c", "3");
        h.insert(1, "b", "2").insert(0, "z", "0").insert(4, "d", "4");
        assertThat(h).isEqualTo(new WmpHeaders().add("z", "0").add("a", "1").add("b", "2").add("c", "3").add("d", "4"));
        assertThat(new WmpHeaders().insert(0, "x", "y")).isEqualTo(new WmpHeaders().add("x", "y"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> h.insert(6, "e", "5"))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void setReplacesTheFirstFieldWhereItStandsAndDropsTheLaterOnes() {
        WmpHeaders h = list("a", "1", "b", "2", "a", "3", "c", "4", "a", "5");
        h.set("a", "x");
        assertThat(h).isEqualTo(list("a", "x", "b", "2", "c", "4"));
    }

    @Test
    void setAppendsAFieldThatIsAbsent() {
        assertThat(list("a", "1").set("b", "2")).isEqualTo(list("a", "1", "b", "2"));
    }

    @Test
    void removeDropsEveryValueAndKeepsTheOrderOfTheRest() {
        WmpHeaders h = list("a", "1", "b", "2", "a", "3", "c", "4");
        h.remove("a").remove("absent");
        assertThat(h).isEqualTo(list("b", "2", "c", "4"));
        assertThat(h.contains("a")).isFalse();
        assertThat(h.contains("c")).isTrue();
        assertThat(h.get("c")).isEqualTo("4");
    }

    @Test
    void aListEmptiedByRemoveTakesNewFieldsAgain() {
        WmpHeaders h = list("a", "1", "a", "2");
        h.remove("a").add("b", "3").set("c", "4");
        assertThat(h).isEqualTo(list("b", "3", "c", "4"));
        assertThat(h.size()).isEqualTo(2);
    }

    @Test
    void aRecycledListComesBackEmptyFromItsSparesOnceAndAListMadeByHandIsNotKept() throws Exception {
        WmpHeaders.Spares spares = new WmpHeaders.Spares(1);
        WmpHeaders first = spares.take(8).add("traceparent", "00-aa-bb-01").add("x-weft-deadline-ms", "900");
        first.recycle();
        first.recycle(); // a second call must not hand the list out twice
        WmpHeaders again = spares.take(8);
        assertThat(again).isSameAs(first);
        assertThat(again.size()).isZero();
        assertThat(again.get("traceparent")).isNull();
        assertThat(spares.take(8)).as("given back once, taken once").isNotSameAs(first);

        WmpHeaders other = spares.take(8).add("a", "1");
        WmpHeaders third = spares.take(8).add("b", "2");
        other.recycle();
        third.recycle(); // one slot: this one is left to the garbage collector
        assertThat(spares.take(8)).isSameAs(other);
        assertThat(spares.take(8)).isNotSameAs(third);

        WmpHeaders byHand = list("c", "3");
        byHand.recycle();
        assertThat(byHand.get("c")).isEqualTo("3");

        WmpHeaders elsewhere = spares.take(8).add("d", "4");
        Thread t = Thread.ofPlatform().start(elsewhere::recycle);
        t.join();
        assertThat(spares.take(8)).as("given back from another thread: not taken").isNotSameAs(elsewhere);
    }
}
