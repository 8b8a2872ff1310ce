module github.com/ccsets/ccs

go 1.26.8

require (
	github.com/sbinet/npyio v0.9.0
	gonum.org/v1/gonum v0.16.0
	gonum.org/v1/netlib v0.0.0-20230729102104-8b8060e7531f
)

require (
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/yalue/onnxruntime_go v1.33.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)
