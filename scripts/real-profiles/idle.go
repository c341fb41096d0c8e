// A Go program with goroutines that wait (channel receive, select on a timer, time.Sleep,
// sync.Cond, an idle listener) and one that works: the off-CPU stacks of the Go runtime's idle
// threads for the idle-wait presets (capture.sh records them with perf).
package main

import (
	"net"
	"sync"
	"time"
)

var sink uint64

func work() {
	for {
		for i := 0; i < 5_000_000; i++ {
			sink += uint64(i)
		}
		time.Sleep(time.Millisecond)
	}
}

func main() {
	ch := make(chan int)
	go func() {
		for range ch {
		}
	}()
	go func() {
		for {
			select {
			case <-ch:
			case <-time.After(3 * time.Millisecond):
			}
		}
	}()
	go func() {
		for {
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	go func() {
		for {
			mu.Lock()
			cond.Wait()
			mu.Unlock()
		}
	}()
	go func() {
		for {
			time.Sleep(4 * time.Millisecond)
			cond.Broadcast()
		}
	}()
	if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		go func() {
			for {
				if c, err := l.Accept(); err == nil {
					c.Close()
				}
			}
		}()
	}
	go work()
	select {}
}
