; Counted for loops whose initializer declares the induction variable:
; the candidates of unroll and of loop analyses. Capture: @loop.
(for_statement
  initializer: (declaration)
  condition: (binary_expression)) @loop
