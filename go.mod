module github.com/cairnstore/cairn

go 1.26.8

require (
	github.com/gorilla/mux v1.8.1
	github.com/klauspost/reedsolomon v1.14.2
	github.com/mattn/go-isatty v0.0.24
	github.com/minio/md5-simd v1.1.2
	github.com/rs/zerolog v1.35.1
	github.com/schollz/progressbar/v3 v3.19.1
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/klauspost/cpuid/v2 v2.3.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/term v0.44.0 // indirect
)
