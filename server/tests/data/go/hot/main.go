// A program with a known hot function, profiled with runtime/pprof: the integration tests
// (server/tests/formats_go.rs) build and run it, then import its profiles through every path
// and compare Embers' share of hotLoop with what `go tool pprof -top` reports.
//
//	go run . -cpu cpu.pb.gz -heap heap.pb.gz -seconds 2
package main

import (
	"flag"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

var sink uint64
var keep [][]byte

// hotLoop burns about three quarters of the CPU time.
//
//go:noinline
func hotLoop(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// warmLoop burns the rest.
//
//go:noinline
func warmLoop(n int) uint64 {
	var x uint64 = 7
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// allocate keeps some memory live, so the heap profile has something to show.
//
//go:noinline
func allocate(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 4096))
	}
}

func main() {
	cpu := flag.String("cpu", "cpu.pb.gz", "CPU profile to write")
	heap := flag.String("heap", "", "heap profile to write (none when empty)")
	seconds := flag.Float64("seconds", 2, "how long to run")
	flag.Parse()
	f, err := os.Create(*cpu)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	runtime.MemProfileRate = 4096
	deadline := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	for time.Now().Before(deadline) {
		sink += hotLoop(3_000_000)
		sink += warmLoop(1_000_000)
		allocate(4)
	}
	pprof.StopCPUProfile()
	f.Close()
	if *heap != "" {
		h, err := os.Create(*heap)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(h); err != nil {
			log.Fatal(err)
		}
		h.Close()
	}
	log.Printf("sink %d, kept %d", sink, len(keep))
}
