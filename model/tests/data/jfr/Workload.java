// A Java workload with known hot methods, for Embers' JFR reader tests: about two thirds of
// the main thread's CPU in Workload.hot, a third in Workload.warm, allocations in
// Workload.allocate (a thread of its own) and monitor contention in Workload.contend.
import java.util.ArrayList;
import java.util.List;

public class Workload {
    static final Object LOCK = new Object();
    static volatile long sink;

    static long spin(long n) {
        long x = 1;
        for (long i = 0; i < n; i++) x = x * 6364136223846793005L + i;
        return x;
    }
    static long hot() { return spin(2_000_000); }
    static long warm() { return spin(1_000_000); }

    static void allocate(long until) {
        List<byte[]> keep = new ArrayList<>();
        while (System.nanoTime() < until) {
            keep.add(new byte[64 * 1024]);
            if (keep.size() > 64) keep.clear();
            sink += spin(300_000);
        }
    }

    static void contend(long until) {
        while (System.nanoTime() < until) {
            synchronized (LOCK) { sink += spin(200_000); }
        }
    }

    public static void main(String[] args) throws Exception {
        long until = System.nanoTime() + 4_000_000_000L;
        Thread alloc = new Thread(() -> allocate(until), "allocator");
        Thread c1 = new Thread(() -> contend(until), "contender-1");
        Thread c2 = new Thread(() -> contend(until), "contender-2");
        alloc.start(); c1.start(); c2.start();
        while (System.nanoTime() < until) { sink += hot(); sink += warm(); }
        alloc.join(); c1.join(); c2.join();
    }
}
