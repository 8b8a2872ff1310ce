module github.com/ccsets/ccs/internal/kernel/_gen

go 1.26.8

require github.com/mmcloughlin/avo v0.6.0

require (
	golang.org/x/mod v0.32.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/tools v0.41.0 // indirect
)
