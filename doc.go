// Package ccs is the reference implementation of contrastive conformal sets
// (CCS): sets in an embedding space, around an anchor's embedding Z, that
// contain the embeddings of its positives with probability at least 1−α (a
// distribution-free split-conformal guarantee), while their learned shape
// excludes negatives or has minimum volume.
//
// The packages follow the method's data flow, from the data to the
// services:
//
//	bundle               embedding bundles: anchors, positives, negatives (.npz/.npy)
//	table                Parquet, Arrow and Hugging Face dataset tables of embeddings (Apache Arrow)
//	sim                  the paper's 3-D "mixed" simulation
//	images               image sets: Fashion-MNIST, MNIST digits, noise (IDX files)
//	augment              the augmented views that are an image's positives
//	embed                images to bundles through an encoder; the embedding cache
//	encoder              ONNX Runtime encoders (cgo)
//	geometry             set families: Ball, Ellipsoid, Norm (‖Mx‖_p), GenBall (Σ(m_j|x_j|)^p_j)
//	head                 the InfoNCE projection head, and sets behind it
//	objective            the training objectives: Neg, Vol, Neg+Vol, InfoNCE
//	train                the paper's recipes and the fit pipeline (train.Fit)
//	conformal            thresholds with the guarantee, calibration modes, fitted-set files
//	baseline             the vanilla conformal sets: ℓ2 ball, Mahalanobis ellipsoid
//	eval                 coverage of positives, exclusion of negatives, LogVol/d
//	hull                 convex hulls and their gauge, the paper's coverage baseline
//	ood                  OOD scores: CCS and the baselines (MSP, Energy, KNN, ViM, CIDER, …)
//	retrieve             certified retrieval: every collection item inside a set
//	retrieve/clickhouse  the same answers from ClickHouse, one table or a cluster's shards
//	serve                the HTTP service, and its load generator
//	experiment           the paper's tables (simulation, p-norm, sensitivity, Fashion-MNIST, OOD, convex hull); every kind of result, registered once, with its figures
//	figure               a plotting library (gonum.org/v1/plot): figures as PNG and SVG, panels, legends, the palette
//	report               one self-contained HTML page of the results
//	cmd/ccs              the command-line tool
//	capi                 the C ABI (cgo, c-shared) under the Python package python/ccs
//	bench/epoch          times training epochs, beside PyTorch (bench/run.sh)
//	bench/serve          drives the HTTP service for its benchmark
//	bench/oodpool        times the per-input OOD score of a set file on real embeddings
//	bench/oodbase        times each OOD baseline's fit and scoring on feature files
//	bench/scaling        times training, retrieval and OOD queries at 1, 2, 4 … NumCPU threads
//	internal/kernel      the fast kernels and every build variant of them (vectors, BLAS)
//	internal/parallel    loops over fixed chunks: results independent of the goroutines
//	internal/gradcheck   finite-difference checks of every gradient
//	internal/chtest      real ClickHouse servers (two shards) for the tests
//	internal/sttest      .safetensors files laid out as the format's writer does, for the tests
//	internal/arrowtest   Arrow IPC files and streams written for the tests
//	internal/suggest     the name a mistyped one most likely meant, for "did you mean"
//	internal/textclip    messages that quote a file cut where a value runs long
//	internal/atomicfile  files written to a temporary name and renamed
//	internal/fixture     small real results of every kind and the commands' -json, for the figure and report tests
//	internal/enum        the enums' one form: names, text and parsing from a table
//	internal/hugepage    huge pages asked for the large buffers written once (Linux)
//	internal/jsonerr     JSON decoding errors in the file's words (the field as written, what was wanted)
//	internal/jsonfloat   NaN and infinities in JSON, one way for every output
//	internal/jsonindent  indented JSON with each array of numbers on one line
//	internal/jsonscan    large set files read in one pass: an object's members, arrays of numbers
//	internal/fastfloat   the decimals text tables are written in, read without strconv and never differently
//	internal/percent     rates as percentages that never round one short of 100% up to it
//	internal/buildinfo   which build runs: version, revision, Go, kernels, BLAS
//	internal/race        whether the race detector is on, for the tests that shrink under it
//
// Vocabulary: a score φ(x) of a difference x = Z − z; the set at threshold t
// is {z : φ(Z − z) ≤ t}. Coverage is the fraction of positives inside,
// exclusion the fraction of negatives outside. α is the miscoverage level.
//
// The guarantee (the paper's Lemma 1): calibrate on anchors exchangeable with
// the test anchors and disjoint from everything used to choose the geometry,
// one positive per calibration anchor, and take the ⌈(1−α)(n+1)⌉-th smallest
// score. conformal.OnePerAnchor does this; conformal.Pooled (the paper's code)
// is approximate and labelled so.
package ccs
