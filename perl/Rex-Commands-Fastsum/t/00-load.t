# The modules load, export what the POD documents, and agree on their
# version (no server needed: this runs wherever Rex is installed).
use v5.12.5;
use warnings;
use Test::More;

plan skip_all => 'Rex is not installed' if !eval { require Rex; 1 };

use_ok('Rex::Commands::Fastsum');
use_ok('Rex::Commands::Fastsum::Tar');
is_deeply(
  [ sort @Rex::Commands::Fastsum::EXPORT ],
  [ sort qw(sync_up sync_down md5 md5_many checksums) ],
  'exports sync_up, sync_down, md5, md5_many and checksums'
);
can_ok( 'Rex::Commands::Fastsum', @Rex::Commands::Fastsum::EXPORT );
like( $Rex::Commands::Fastsum::VERSION, qr/^\d+\.\d+\.\d+$/, 'a three-part version' );
is( $Rex::Commands::Fastsum::Tar::VERSION, $Rex::Commands::Fastsum::VERSION,
  'Tar.pm carries the distribution version' );
done_testing;
