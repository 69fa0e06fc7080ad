# MANIFEST names every file of the distribution and nothing else: each
# listed file exists, and every file here is listed or matched by
# MANIFEST.SKIP (build products), so `make dist` ships what is tested.
use v5.12.5;
use warnings;
use Test::More;
use ExtUtils::Manifest qw(maniread manifind);

my $listed = maniread();
ok( keys %$listed, 'MANIFEST lists files' );
my @missing = grep { !-e $_ } sort keys %$listed;
is_deeply( \@missing, [], 'every file MANIFEST lists exists' );

# manifind's files less those MANIFEST.SKIP matches (as `make distcheck`
# reads it).
open( my $fh, '<', 'MANIFEST.SKIP' ) or die("MANIFEST.SKIP: $!");
my @skip = map { chomp; s/\s+#.*//r } grep { /\S/ && !/^\s*#/ } <$fh>;
my @unlisted = grep {
  my $f = $_;
  !exists $listed->{$f} && !grep { $f =~ /$_/ } @skip
} sort keys %{ manifind() };
is_deeply( \@unlisted, [], 'every file here is in MANIFEST (or MANIFEST.SKIP)' );
done_testing;
