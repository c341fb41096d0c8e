// A Java program with an idle thread pool, a scheduled executor, Thread.sleep, Object.wait and a
// busy thread: the off-CPU stacks of parked JVM threads for the idle-wait presets (capture.sh
// records them with perf; -XX:+DumpPerfMapAtExit names the compiled frames).
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

public class Idle {
    static volatile long sink;
    static final Object monitor = new Object();

    public static void main(String[] args) throws Exception {
        ThreadPoolExecutor pool = (ThreadPoolExecutor) Executors.newFixedThreadPool(4);
        ScheduledExecutorService timer = Executors.newScheduledThreadPool(1);
        timer.scheduleAtFixedRate(() -> pool.submit(() -> sink++), 0, 3, TimeUnit.MILLISECONDS);
        Thread sleeper = new Thread(() -> {
            while (true) {
                try { Thread.sleep(2); } catch (InterruptedException e) { return; }
            }
        }, "sleeper");
        Thread waiter = new Thread(() -> {
            while (true) {
                synchronized (monitor) {
                    try { monitor.wait(3); } catch (InterruptedException e) { return; }
                }
            }
        }, "waiter");
        Thread busy = new Thread(() -> {
            while (true) {
                for (int i = 0; i < 10_000_000; i++) sink += i;
                try { Thread.sleep(1); } catch (InterruptedException e) { return; }
            }
        }, "busy");
        sleeper.start();
        waiter.start();
        busy.start();
        Thread.sleep(Long.parseLong(args[0]) * 1000);
        System.exit(0);
    }
}
