package gate

import "testing"

var sink uint64

func BenchmarkHandle(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Handle()
	}
}
