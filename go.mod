module github.com/ccsets/ccs

go 1.26.8

require (
	github.com/campoy/embedmd v1.0.0 // indirect
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/sbinet/npyio v0.9.0 // indirect
	golang.org/x/text v0.23.0 // indirect
	gonum.org/v1/gonum v0.16.0 // indirect
)
