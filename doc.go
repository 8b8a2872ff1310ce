// Package ccs is the reference implementation of contrastive conformal sets
// (CCS): sets in an embedding space, around an anchor's embedding Z, that
// contain the embeddings of its positives with probability at least 1−α (a
// distribution-free split-conformal guarantee), while their learned shape
// excludes negatives or has minimum volume.
//
// The packages follow the method's data flow:
//
//	bundle     embedding bundles: anchors, positives, negatives (.npz/.npy)
//	geometry   set families: Ball, Ellipsoid, Norm (‖Mx‖_p), GenBall (Σ(m_j|x_j|)^p_j)
//	baseline   the vanilla conformal sets: ℓ2 ball, Mahalanobis ellipsoid
//	conformal  thresholds with the guarantee, calibration modes, fitted-set files
//	eval       coverage of positives, exclusion of negatives, LogVol/d
//	sim        the paper's 3-D "mixed" simulation
//	experiment the paper's tables
//	cmd/ccs    the command-line tool
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
